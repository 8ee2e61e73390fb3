package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestUndoneSubmissionHandsStepsToCreator: create_work makes the work
// units and then fails; BOINC's database cannot say which it made, and the
// state's cannot mark the chains failed (both away, as when MariaDB is
// killed then). The submission fails, and its chains' first steps, left
// creating under this live process, go to the creator once the state is
// back: the creator records the work units BOINC has, one each, and the
// chains run. Without the hand-over they stayed creating while the server
// lived, and a resubmission was answered with chains that never ran.
func TestUndoneSubmissionHandsStepsToCreator(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	// Restored after the engine is closed (cleanups run last-first): its
	// lease renewal reads LeaseTTL.
	oldTTL := store.LeaseTTL
	t.Cleanup(func() { store.LeaseTTL = oldTTL })
	store.LeaseTTL = 1500 * time.Millisecond
	const n = 3
	f := newFixture(t)
	restoreCW := wrapCreateWork(t, f.e, "{{cw}}\necho 'create_work: lost its database' >&2\nexit 1")
	restoreDB := engine.SetUndoFaults(errors.New("BOINC's database is away"), errors.New("the state database is away"))
	b := &benchEnv{tb: t, ctx: f.ctx, e: f.e, u: f.u}
	_, err := f.e.Submit(f.ctx, f.u, b.request("g", n, 2))
	restoreDB()
	restoreCW()
	if err == nil || !strings.Contains(err.Error(), "could not be asked") {
		t.Fatalf("submission: %v, want create_work's failure, BOINC's database unasked", err)
	}
	if got := stepZeroStates(t, f.e, f.u, "g"); got["creating"] != n {
		t.Fatalf("after the failed undo, step 0 of the chains is %v, want %d creating", got, n)
	}
	if total, _ := boincCounts(t, f.e); total != n {
		t.Fatalf("BOINC has %d work units, want the %d create_work made", total, n)
	}
	// The hand-over comes with the lease's next renewal (LeaseTTL/3).
	if !polled(10*time.Second, func() bool { return stepZeroStates(t, f.e, f.u, "g")[store.StatePending] == n }) {
		t.Fatalf("step 0 of the chains is %v, want %d pending (handed to the creator)", stepZeroStates(t, f.e, f.u, "g"), n)
	}
	var log syncBuffer
	startCreator(t, f.root, &log)
	if !polled(time.Minute, func() bool { return stepZeroStates(t, f.e, f.u, "g")[store.StateQueued] == n }) {
		t.Fatalf("step 0 of the chains is %v, want %d queued; creator's log:\n%s", stepZeroStates(t, f.e, f.u, "g"), n, log.String())
	}
	if total, _ := boincCounts(t, f.e); total != n {
		t.Errorf("BOINC has %d work units, want %d: the creator made some again", total, n)
	}
	cs, err := f.e.State().Chains(f.ctx, f.u.ID, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.State != wire.StateRunning {
			t.Errorf("chain %s is %s, want running", c.Name, c.State)
		}
	}
}
