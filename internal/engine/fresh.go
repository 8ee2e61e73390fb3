package engine

import (
	"context"
	"sync"
)

// fresh notes the contents one request brought into the pool, so that a
// request that fails can take them out again before it answers.
type fresh struct {
	mu   sync.Mutex
	sums []string
}

func (f *fresh) add(sum string) {
	f.mu.Lock()
	f.sums = append(f.sums, sum)
	f.mu.Unlock()
}

func (f *fresh) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sums...)
}

// dropFresh removes, after a failed request, the contents it brought into
// the pool that nothing refers to (another request may have started using
// one meanwhile), with their download links. A failure to do so is logged:
// collection removes what is left, after its grace.
func (e *Engine) dropFresh(ctx context.Context, sums []string) {
	if len(sums) == 0 {
		return
	}
	n := 0
	err := e.db.ForgetUnused(ctx, sums, func(unused []string) {
		for _, m := range unused {
			e.Pool.Unstage(e.Proj, m, false)
			if err := e.Pool.Remove(m); err != nil {
				e.Log.Warn("removing a content a failed request brought", "md5", m, "err", err)
				continue
			}
			n++
		}
	})
	if err != nil {
		e.Log.Warn("forgetting the contents a failed request brought; their files are gone, collection tidies the index", "err", err)
	}
	e.Log.Info("failed request: removed the contents it brought into the pool", "contents", n)
}
