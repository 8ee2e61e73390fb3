package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A batch of next steps whose create_work run fails is settled in a few
// more runs, not one per step: the work units BOINC holds already (a
// creator stopped before recording them) are found in one look-up and
// recorded as created, the rest created together, and a step that cannot
// be created is split out in O(log n) runs and fails its chain alone.
// It runs with create_work (its runs counted) and with native creation,
// BOINC's database on SQLite and on MariaDB.
func TestFailedBatchSettledInFewRuns(t *testing.T) {
	for _, create := range []string{engine.CreateWithCreateWork, engine.CreateNative} {
		t.Run(create, func(t *testing.T) {
			forEnginesCreate(t, create, func(t *testing.T, e *engine.Engine, u store.User) {
				settleFailedBatch(&fixture{t: t, ctx: context.Background(), root: e.Root, e: e, u: u}, create != engine.CreateNative)
			})
		})
	}
}

// settleFailedBatch makes a batch of next steps fail and checks how it is
// settled; count says to bound the create_work runs.
func settleFailedBatch(f *fixture, count bool) {
	t := f.t
	// 120 chains: the search of the batch for its bad step takes about
	// 2*log2(n) create_work runs, where one run a chain would take 120,
	// well apart from the bound of 24 (300 chains proved the same at 2.5
	// times the processor time: 48 processor-s under -race).
	const n = 120
	wus := f.submitMany("g", n, 3)
	release := f.holdCreator()
	for _, wu := range wus {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
	}
	f.intake(n)
	release()
	if got, err := f.e.CreatePending(f.ctx); err != nil || got != n {
		t.Fatalf("CreatePending = %d, %v", got, err)
	}
	// The stop: every next step says pending again; BOINC holds the work
	// units of a few of them only.
	db := f.e.State().SQL()
	if _, err := db.ExecContext(f.ctx, `UPDATE steps SET state = 'pending' WHERE step = 1`); err != nil {
		t.Fatal(err)
	}
	kept := map[int]bool{3: true, 47: true, 80: true, n - 1: true}
	next := make([]string, n)
	bdb, err := f.e.OpenBoincDB(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	boincWUs := func(name string) int {
		var n int
		if err := bdb.QueryRowContext(f.ctx, `SELECT count(*) FROM workunit WHERE name = ?`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, wu := range wus {
		c, _, err := f.e.State().StepByWU(f.ctx, wu)
		if err != nil {
			t.Fatal(err)
		}
		next[i] = c.WU(1)
		if kept[i] {
			continue
		}
		if _, err := bdb.ExecContext(f.ctx, `DELETE FROM workunit WHERE name = ?`, next[i]); err != nil {
			t.Fatal(err)
		}
	}
	// One chain's next step cannot be created: create_work cannot read
	// its input template.
	const bad = 91
	c, _, err := f.e.State().StepByWU(f.ctx, wus[bad])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(f.ctx, `UPDATE chains SET wu_tmpl = 'templates/gone_in' WHERE id = ?`, c.ID); err != nil {
		t.Fatal(err)
	}
	runs := func() int { return 0 }
	if count {
		runs = f.countCreateWork()
	}
	t0 := time.Now()
	if got, err := f.e.CreatePending(f.ctx); err != nil || got != n {
		t.Fatalf("CreatePending = %d, %v", got, err)
	}
	if count {
		t.Logf("settled %d next steps in %d create_work runs, %v", n, runs(), time.Since(t0))
	}
	// 1 failed run, 1 again without the work units found, then two
	// halves per level down to the bad step: about 2*log2(n) more.
	if count && runs() > 24 {
		t.Errorf("%d create_work runs to settle a batch of %d with one bad step", runs(), n)
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range st.Chains {
		want := wire.StateRunning
		if ch.Name == c.Name {
			want = wire.StateFailed
		}
		if ch.State != want {
			t.Fatalf("chain %s is %s, want %s (%s)", ch.Name, ch.State, want, ch.Error)
		}
	}
	for i, wu := range wus {
		want, wantWUs := "queued", 1
		if i == bad {
			want, wantWUs = "failed", 0
		}
		if st := f.stepState(wu, 1); st != want {
			t.Fatalf("chain %d: next step %s, want %s", i, st, want)
		}
		if got := boincWUs(next[i]); got != wantWUs {
			t.Fatalf("chain %d: %d work units %s, want %d", i, got, next[i], wantWUs)
		}
	}
}
