package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// scratchCache remembers how many bytes each user's scratch area holds, so
// that a submission of many files does not walk the area once per file. A
// completed upload, collection or copy adds its size; anything that may
// have removed files (or changed them by an amount not known here) marks
// the figure stale, and it errs on the high side until measured again.
//
// Measuring walks the whole area, a second of CPU per 100,000 entries, and
// a user may have millions within the quota: were every change followed by
// a walk, a PROPPATCH of nothing and a one-byte PUT, in a loop, would keep
// the server's cores busy (22 CPU-seconds for 16 such pairs on 100,000
// entries). So one walk of an area runs at a time, the others waiting for
// its figure, and a stale figure is measured again at once only when
// measuring is cheap (under scratchCheapWalk), else once the time since the
// last walk is scratchWalkRatio times what it took: measuring takes at most
// about a tenth of the time, whatever the user does.
type scratchCache struct {
	mu    sync.Mutex
	m     map[string]*scratchUse
	walks atomic.Int64 // areas measured, for tests
}

type scratchUse struct {
	walking sync.Mutex // held while the area is measured
	bytes   int64
	at      time.Time     // when last measured (zero: never)
	took    time.Duration // what measuring took then
	stale   bool          // changed since by an amount not known
	added   int64         // added since the walk in progress started
	marks   int64         // times marked stale, to tell a mark made during a walk
}

const (
	scratchFresh     = 30 * time.Second
	scratchCheapWalk = 20 * time.Millisecond
	scratchWalkRatio = 10
)

// due tells whether u must be measured (again).
func (u *scratchUse) due(now time.Time) bool {
	if u.at.IsZero() {
		return true
	}
	age := now.Sub(u.at)
	if age >= max(scratchFresh, scratchWalkRatio*u.took) {
		return true
	}
	return u.stale && (u.took < scratchCheapWalk || age >= scratchWalkRatio*u.took)
}

func (c *scratchCache) entry(root string) *scratchUse {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*scratchUse{}
	}
	u, ok := c.m[root]
	if !ok {
		u = &scratchUse{}
		c.m[root] = u
	}
	return u
}

func (c *scratchCache) used(root string) int64 {
	u := c.entry(root)
	c.mu.Lock()
	due, n := u.due(time.Now()), u.bytes
	c.mu.Unlock()
	if !due {
		return n
	}
	u.walking.Lock()
	defer u.walking.Unlock()
	c.mu.Lock()
	due, n = u.due(time.Now()), u.bytes
	c.mu.Unlock()
	if !due {
		return n // measured by the request this one waited for
	}
	c.mu.Lock()
	u.added = 0
	marks := u.marks
	c.mu.Unlock()
	start := time.Now()
	n, _ = treeBytes(root)
	c.walks.Add(1)
	if n >= scratchMinCharge {
		n -= scratchMinCharge // the area itself is not the user's doing
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// What was added while the walk ran is counted on top (once more if
	// the walk saw it: on the high side), and a stale mark set meanwhile
	// stays.
	u.bytes, u.at, u.took, u.stale = n+u.added, start, time.Since(start), u.marks != marks
	return u.bytes
}

// add counts n more bytes (fewer when negative) in the area at root.
func (c *scratchCache) add(root string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.m[root]; ok {
		u.bytes += n
		u.added += n
	}
}

// forget marks the figure of root stale: files may have gone, or changed
// by an amount not known here.
func (c *scratchCache) forget(root string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.m[root]; ok {
		u.stale = true
		u.marks++
	}
}
