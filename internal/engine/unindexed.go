package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// unindexedMinAge is how long a pool file no row names is left alone
// before collection removes it, whatever the grace: a request writes its
// contents before it records them, for as long as its body takes to read.
// Atomic: tests shorten it while other tests' requests read it.
var unindexedMinAge atomic.Int64

func init() { unindexedMinAge.Store(int64(time.Hour)) }

func minUnindexedAge() time.Duration { return time.Duration(unindexedMinAge.Load()) }

// collectUnindexed removes the pool files no row of the pool's index names
// and nothing uses, untouched for the grace (and unindexedMinAge), with
// their download links and owner rows; and the owner rows of contents no
// longer pooled. A process killed between writing a content and recording
// it leaves such a file (and a retry of the request made its user the
// owner); collection, walking the rows, would never find it. The pool
// directory is walked at most once per grace, like the temporary files.
func (e *Engine) collectUnindexed(ctx context.Context, grace time.Duration) {
	now := time.Now()
	last := e.lastUnindexed.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < grace || !e.lastUnindexed.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	before := now.Add(-max(grace, minUnindexedAge()))
	aged, err := e.Pool.Aged(before)
	if err != nil {
		e.Log.Warn("listing the pool's contents", "err", err)
	}
	n := 0
	err = e.db.ForgetUnindexed(ctx, aged, func(orphans []string) []string {
		var gone []string
		claimed := e.legacyLinksClaimed(ctx, orphans)
		for _, m := range orphans {
			// Looked at again under the write lock: a request that found
			// it in the pool since touched it (Pool.Touch).
			if !e.Pool.AgedSince(m, before) {
				continue
			}
			e.Pool.Unstage(e.Proj, m, claimed[m])
			if err := e.Pool.Remove(m); err != nil {
				e.Log.Warn("removing a pool content no row names", "md5", m, "err", err)
				continue
			}
			gone = append(gone, m)
		}
		n += len(gone)
		return gone
	})
	if err != nil {
		e.Log.Warn("collecting pool contents no row names", "err", err)
	}
	if n > 0 {
		e.Log.Info("removed pool contents no row named (left by a process killed between writing and recording them)", "contents", n)
	}
	cursor, _ := e.strayCursor.Load().(string)
	k, next, err := e.db.ForgetStrayOwners(ctx, cursor, strayOwnersBatch)
	e.strayCursor.Store(next)
	if err != nil {
		e.Log.Warn("collecting owner rows of contents no longer pooled", "err", err)
	}
	if k > 0 {
		e.Log.Info("removed owner rows of contents no longer pooled", "contents", k)
	}
}

// strayOwnersBatch bounds the contents one collection pass looks at for
// owner rows without a pool row (each is looked up in the in-use tables);
// the next pass goes on after them.
const strayOwnersBatch = 400
