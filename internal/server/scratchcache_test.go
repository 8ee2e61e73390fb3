package server

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestScratchMeasuringBounded: changes that make the scratch figure stale
// (a PROPPATCH or DELETE, cheap for the user) do not each cost a walk of a
// large area: a burst of them costs one walk, concurrent requests share
// one, and what was removed shows once the walk is due again.
func TestScratchMeasuringBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("makes up to 60,000 files")
	}
	// Files by the thousand until a walk costs several times what is
	// cheap (up to 60,000: a slow machine needs few, a fast one more).
	root := t.TempDir()
	var c *scratchCache
	var full int64
	var u *scratchUse
	n := 0
	for d := range 60 {
		dir := filepath.Join(root, "d"+strconv.Itoa(d))
		os.Mkdir(dir, 0o755)
		for i := range 1000 {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		n += 1000
		if n%5000 != 0 && d != 59 {
			continue
		}
		c = &scratchCache{}
		full = c.used(root)
		if u = c.entry(root); u.took >= 4*scratchCheapWalk {
			break
		}
	}
	if u.took < scratchCheapWalk {
		t.Skipf("a walk of %d entries took %v here, too little to be bounded", n, u.took)
	}
	t.Logf("a walk of %d entries: %v, %d bytes", n, u.took, full)
	// A loop of changes and checks, as a hostile user would send.
	start := time.Now()
	for range 20 {
		c.forget(root)
		c.add(root, scratchMinCharge)
		c.used(root)
	}
	allowed := 1 + int64(time.Since(start)/(scratchWalkRatio*u.took))
	if w := c.walks.Load() - 1; w > allowed {
		t.Errorf("20 changes, each followed by a check, walked the area %d times in %v (a walk takes %v)", w, time.Since(start), u.took)
	}
	if got := c.used(root); got < full+20*scratchMinCharge {
		t.Errorf("stale figure %d, below the %d measured plus what was added", got, full+20*scratchMinCharge)
	}

	// Files removed show once the figure is due; 16 checks at once share one walk.
	os.RemoveAll(filepath.Join(root, "d0"))
	c.forget(root)
	time.Sleep(scratchWalkRatio * c.entry(root).took)
	before := c.walks.Load()
	var wg sync.WaitGroup
	figures := make([]int64, 16)
	for i := range figures {
		wg.Go(func() { figures[i] = c.used(root) })
	}
	wg.Wait()
	if w := c.walks.Load() - before; w != 1 {
		t.Errorf("16 checks at once walked the area %d times", w)
	}
	for _, f := range figures {
		if f >= full {
			t.Errorf("after removing 1,000 files the figure is %d, was %d", f, full)
		}
	}
}
