//go:build !linux

package store

// turnFile: without open file description locks writers do not take
// turns (see writeturns.go); SQLite's busy handler orders them alone.
type turnFile struct{}

func openTurns(string) (*turnFile, error) { return nil, nil }

func (*turnFile) tryLock(int64) (bool, error) { return true, nil }

func (*turnFile) unlock(int64) {}

func (*turnFile) close() {}
