package engine_test

import (
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestPurgeSentAgainCancelsWhatTheFirstLeft: a -purge whose commit was
// recorded but whose work units were not cancelled (the server went away
// before; its answer lost, or 503 outcome_unknown) is sent again by the
// clients as safe to repeat: it finds no chain to purge, and must still
// cancel the purged chains' work units in BOINC. Before, it cancelled
// none: they ran on the volunteers to the end, for nothing.
func TestPurgeSentAgainCancelsWhatTheFirstLeft(t *testing.T) {
	f := newFixture(t)
	wu := f.submit("g", "c1", 3).Chains[0].FirstWU
	if f.boincWUs(wu) != 1 {
		t.Fatalf("the first step's work unit %s is not in BOINC", wu)
	}
	// The first purge: committed, then the server went away.
	if chains, _, err := f.e.State().Purge(f.ctx, f.u.ID, "g", ""); err != nil || len(chains) != 1 {
		t.Fatalf("the first purge: %d chains, %v", len(chains), err)
	}
	if _, err := f.e.Purge(f.ctx, f.u, wire.ChainRef{Group: "g"}); err == nil {
		t.Fatal("the purge sent again found a chain to purge")
	}
	var mask int
	if err := f.bdb.QueryRow(`SELECT error_mask FROM workunit WHERE name = ?`, wu).Scan(&mask); err != nil {
		t.Fatal(err)
	}
	if mask&16 == 0 {
		t.Fatalf("the purged chain's work unit %s: error_mask %d, not cancelled (16) by the purge sent again", wu, mask)
	}
}
