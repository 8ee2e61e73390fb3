// Package ctxsleep waits for a time or until a context ends, whichever is
// first: the pause of every loop that polls (the native assimilator, the
// stand-in's daemons and volunteer).
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d or until ctx is done; it reports whether ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
