package engine_test

import (
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestCollectForgetsPurgedSteps: the steps of a purged chain are deleted
// by collection once BOINC no longer holds them (and the purge is older
// than the grace); a step BOINC still holds stays until it returns; the
// chain rows stay, and a name submitted again gets work units never named
// before.
func TestCollectForgetsPurgedSteps(t *testing.T) {
	t.Parallel() // it sleeps past a grace of 0: beside other tests
	f := newFixture(t)
	runChains(f, "ended", "a")
	old, err := f.e.State().Chains(f.ctx, f.u.ID, "ended", "a")
	if err != nil || len(old) != 1 {
		t.Fatalf("chain a: %v %v", old, err)
	}
	held := f.submit("held", "b", 2).Chains[0].FirstWU
	// A chain failed: its step ended with an attempt recorded.
	f.e.Cfg.RetryBackoff = 0.001
	f.e.Cfg.MaxStepAttempts = 2
	bad := f.submit("ended", "bad", 2).Chains[0].FirstWU
	if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: 8, WUName: bad, WUID: 3}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := f.e.Status(f.ctx, f.u, "ended", "bad"); err != nil || st.Chains[0].WU == "" || st.Chains[0].WU == bad {
		t.Fatalf("the retry of chain bad: %+v %v", st, err)
	} else if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: 2, WUName: st.Chains[0].WU, WUID: 4}); err != nil {
		t.Fatal(err)
	}
	if c, err := f.e.State().RowCounts(f.ctx); err != nil || c["step_attempts"] == 0 {
		t.Fatalf("the failed step recorded no attempt: %v %v", c["step_attempts"], err)
	}
	for _, g := range []string{"ended", "held"} {
		if _, err := f.e.Purge(f.ctx, f.u, wire.ChainRef{Group: g}); err != nil {
			t.Fatal(err)
		}
	}
	steps := func() int64 {
		t.Helper()
		counts, err := f.e.State().RowCounts(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return counts["steps"]
	}
	time.Sleep(1100 * time.Millisecond) // purged before a grace of 0, to the second
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := steps(); n != 1 {
		t.Errorf("after a collection: %d steps, want 1 (the purged chain's step BOINC still holds)", n)
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: held, Files: f.outputs(held)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	counts, err := f.e.State().RowCounts(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts["steps"] != 0 || counts["step_attempts"] != 0 {
		t.Errorf("after BOINC returned the last work unit: %d steps, %d attempts, want none", counts["steps"], counts["step_attempts"])
	}
	if counts["chains"] != 3 {
		t.Errorf("%d chain rows, want the 3 purged chains kept", counts["chains"])
	}
	again := f.submit("ended", "a", 2).Chains[0].FirstWU
	if again == old[0].WU(0) {
		t.Errorf("chain a submitted again reuses the purged chain's work-unit name %s", again)
	}
}
