package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestDownloadErrorRemakesCapped: a content whose downloads keep failing
// with the input in place (the pool's own file damaged, so linking it
// again changes nothing) is made again without counting at most 3 times;
// then the failure counts as an attempt and, with one allowed, the chain
// fails instead of being remade for ever.
func TestDownloadErrorRemakesCapped(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"max_step_attempts": 1, "max_error_results": 1, "max_total_results": 1})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	_, sum := f.firstInput(wu)
	p := f.e.Pool.Path(sum)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// The same size, other bytes, written into the pool's file itself (its
	// download link is the same file).
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, []byte(strings.Repeat("x", int(fi.Size()))), 0o644); err != nil {
		t.Fatal(err)
	}
	f.world(true, true)
	c := f.waitChain("g", "c1", wire.StateFailed, 2*time.Minute)
	chain, _, err := f.e.State().StepByWU(f.ctx, c.WU)
	if err != nil {
		t.Fatal(err)
	}
	_, attempts, err := f.e.State().ChainSteps(f.ctx, chain.ID)
	if err != nil {
		t.Fatal(err)
	}
	remakes := 0
	for _, a := range attempts {
		if strings.HasPrefix(a.Reason, store.ReasonInputDownload) {
			remakes++
		}
	}
	if remakes != 3 || len(attempts) != 3 {
		t.Fatalf("%d remakes of %d earlier work units (want 3 and 3): %+v; chain: %s", remakes, len(attempts), attempts, c.Error)
	}
	t.Logf("failed: %s", c.Error)
}
