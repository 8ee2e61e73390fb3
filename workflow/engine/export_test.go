package engine

// SetInlineStagedHook makes f run as each inline content is staged, until
// the returned function is called.
func SetInlineStagedHook(f func(e *Engine, sum string)) (restore func()) {
	old := inlineStaged
	inlineStaged = f
	return func() { inlineStaged = old }
}
