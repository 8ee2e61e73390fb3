package spool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// StreamGap is the longest pause between two hook calls of a stream:
// script_assimilator working through a backlog starts the next call within
// milliseconds of the last one's return. A call in a stream returns as soon
// as it is spooled, so that the calls share create_work runs; a lone call
// waits for its next step, so the project looks as after a synchronous hook.
const StreamGap = 50 * time.Millisecond

// lastCall marks, by its modification time, when the last hook call
// returned.
const lastCall = ".last-call"

// waitMarker, present, tells the creator that a hook call waits for it.
const waitMarker = ".wait"

// InStream tells whether a hook call returned within StreamGap.
func InStream(root string) bool {
	fi, err := os.Stat(filepath.Join(Dir(root), lastCall))
	return err == nil && time.Since(fi.ModTime()) < StreamGap
}

// MarkCall records that a hook call returns now.
func MarkCall(root string) {
	p := filepath.Join(Dir(root), lastCall)
	now := time.Now()
	if os.Chtimes(p, now, now) != nil {
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
			f.Close()
		}
	}
}

// AskPass asks the creator for a pass at its next look.
func AskPass(root string) {
	p := filepath.Join(Dir(root), waitMarker)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) && os.MkdirAll(Dir(root), 0o755) == nil {
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644) // no call was spooled here yet
	}
	if err == nil {
		f.Close()
	}
}

// PassAsked tells whether a hook call asked for a pass.
func PassAsked(root string) bool {
	_, err := os.Stat(filepath.Join(Dir(root), waitMarker))
	return err == nil
}

// ClearAsk is done at the start of a pass: the pass serves whoever asked.
// It reports whether anybody had.
func ClearAsk(root string) bool { return os.Remove(filepath.Join(Dir(root), waitMarker)) == nil }
