package engine_test

import (
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A chain aborted or purged while the creator makes its next step's work
// unit gets that work unit cancelled: the abort's (the purge's) cancel ran
// before the work unit existed in BOINC, the step was held (purged) under
// the creator, and the work unit ran on a volunteer for a chain that no
// longer wanted it, cancelled by nobody.
func TestChainEndedWhileItsStepIsMadeIsCancelled(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"abort", "purge"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			wu0 := f.submit("g", "c1", 3).Chains[0].FirstWU
			release := f.holdCreator()
			if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu0, Files: f.outputs(wu0)}); err != nil {
				t.Fatal(err)
			}
			f.intake(1)
			release()
			c, _, err := f.e.State().StepByWU(f.ctx, wu0)
			if err != nil {
				t.Fatal(err)
			}
			next, err := f.e.State().StepOf(f.ctx, c, 1)
			if err != nil || next.State != "pending" {
				t.Fatalf("the next step: %+v, %v; want it pending", next, err)
			}
			f.e.SetAfterCreateSteps(func() {
				ref := wire.ChainRef{Group: "g", Name: "c1"}
				var err error
				if end == "abort" {
					_, err = f.e.Abort(f.ctx, f.u, ref)
				} else {
					_, err = f.e.Purge(f.ctx, f.u, ref)
				}
				if err != nil {
					t.Error(err)
				}
			})
			if n, err := f.e.CreatePending(f.ctx); err != nil || n != 1 {
				t.Fatalf("CreatePending = %d, %v", n, err)
			}
			if f.boincWUs(next.WU) != 1 {
				t.Fatalf("work unit %s: not in BOINC; the test's window was missed", next.WU)
			}
			var mask int
			if err := f.bdb.QueryRowContext(f.ctx, `SELECT error_mask FROM workunit WHERE name = ?`, next.WU).Scan(&mask); err != nil {
				t.Fatal(err)
			}
			if mask&16 == 0 { // WU_ERROR_CANCELLED
				t.Errorf("work unit %s made while its chain's %s committed: error_mask %d, not cancelled", next.WU, end, mask)
			}
		})
	}
}
