package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// holdCreator plays a long-running creator: while it holds the lock, hook
// calls only record their next steps.
func (f *fixture) holdCreator() (release func()) {
	f.t.Helper()
	lf, err := os.OpenFile(filepath.Join(f.root, engine.CreatorLockName), os.O_RDONLY|os.O_CREATE, 0o664)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		f.t.Fatal(err)
	}
	return func() { lf.Close() }
}

// intake is what the creator holding the lock does first at its pass: it
// takes the spooled hook calls in (advance.IntakeSpool), leaving their next
// steps pending for the rest of the pass, CreatePending.
func (f *fixture) intake(want int) {
	f.t.Helper()
	if n, err := advance.IntakeSpool(f.ctx, f.e.Chains()); err != nil || n != want {
		f.t.Fatalf("took %d spooled calls in, %v; want %d", n, err, want)
	}
}

// submitMany submits n one-content chains in one request.
func (f *fixture) submitMany(group string, n, steps int) []string {
	f.t.Helper()
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	var chains []wire.ChainSpec
	for i := 0; i < n; i++ {
		chains = append(chains, wire.ChainSpec{Name: fmt.Sprintf("c%d", i), Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}})
	}
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up, Options: wire.Options{NumSteps: steps}, Chains: chains})
	if err != nil {
		f.t.Fatal(err)
	}
	var wus []string
	for _, c := range resp.Chains {
		wus = append(wus, c.FirstWU)
	}
	return wus
}

func (f *fixture) stepState(wu0 string, step int) string {
	f.t.Helper()
	c, _, err := f.e.State().StepByWU(f.ctx, wu0)
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := f.e.State().StepOf(f.ctx, c, step)
	if err != nil {
		return "none"
	}
	return s.State
}

// While a creator holds the lock, hook calls return with their calls
// spooled; the creator takes them in, then makes all the next steps with
// one create_work run.
func TestPendingStepsCreatedInOneRun(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 20, 3)
	runs := f.countCreateWork()
	release := f.holdCreator()
	for _, wu := range wus {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
	}
	f.intake(len(wus))
	if runs() != 0 || f.stepState(wus[0], 1) != store.StatePending {
		t.Fatalf("with a creator holding the lock the hook ran create_work %d times; step 1 is %s", runs(), f.stepState(wus[0], 1))
	}
	release()
	n, err := f.e.CreatePending(f.ctx)
	if err != nil || n != 20 {
		t.Fatalf("CreatePending = %d, %v", n, err)
	}
	if runs() != 1 {
		t.Fatalf("%d create_work runs for 20 next steps", runs())
	}
	for _, wu := range wus {
		c, _, _ := f.e.State().StepByWU(f.ctx, wu)
		if st := f.stepState(wu, 1); st != "queued" || f.boincWUs(c.WU(1)) != 1 {
			t.Fatalf("%s: step 1 %s, %d work units", wu, st, f.boincWUs(c.WU(1)))
		}
	}
	if n, err := f.e.CreatePending(f.ctx); n != 0 || err != nil || runs() != 1 {
		t.Fatalf("second CreatePending = %d, %v, %d runs", n, err, runs())
	}
}

// A hook that finds no creator creates its next step before it returns.
func TestHookWithoutCreatorCreatesAtOnce(t *testing.T) {
	f := newFixture(t)
	wu := f.submitMany("g", 1, 2)[0]
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
		t.Fatal(err)
	}
	if st := f.stepState(wu, 1); st != "queued" {
		t.Fatalf("step 1 is %s after the hook returned", st)
	}
}

// A chain stopped while its next step waits gets nothing new in BOINC; the
// step is held, inputs and all, for -resume.
func TestStoppedWhilePendingCreatesNothing(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 2, 3)
	runs := f.countCreateWork()
	release := f.holdCreator()
	for _, wu := range wus {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
	}
	f.intake(len(wus))
	if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "g", Name: "c0"}); err != nil {
		t.Fatal(err)
	}
	release()
	if n, err := f.e.CreatePending(f.ctx); err != nil || n != 1 || runs() != 1 {
		t.Fatalf("CreatePending = %d, %v with %d runs; want the one running chain", n, err, runs())
	}
	if st := f.stepState(wus[0], 1); st != "held" {
		t.Fatalf("stopped chain's step 1 is %s", st)
	}
	if st := f.stepState(wus[1], 1); st != "queued" {
		t.Fatalf("running chain's step 1 is %s", st)
	}
	if more, err := f.e.State().AnyPending(f.ctx); more || err != nil {
		t.Fatalf("still pending: %v %v", more, err)
	}
}

// A step whose work unit cannot be created fails its own chain only.
func TestBadPendingStepFailsOnlyItsChain(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 3, 3)
	release := f.holdCreator()
	for i, wu := range wus {
		paths := f.outputs(wu)
		if i == 1 { // a coordinates output no other chain has
			os.WriteFile(paths[0], []byte("only chain 1\n"), 0o644)
		}
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: paths}); err != nil {
			t.Fatal(err)
		}
	}
	f.intake(len(wus))
	// The content chain 1's next step needs vanishes from the pool.
	sum := md5s("only chain 1\n")
	if err := os.Remove(f.e.Pool.Path(sum)); err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		t.Fatal(err)
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Chains {
		want := wire.StateRunning
		if c.Name == "c1" {
			want = wire.StateFailed
		}
		if c.State != want {
			t.Fatalf("chain %s is %s, want %s (%s)", c.Name, c.State, want, c.Error)
		}
	}
	if f.stepState(wus[0], 1) != "queued" || f.stepState(wus[2], 1) != "queued" {
		t.Fatal("the good chains' next steps were not created")
	}
}

// RunCreator picks up steps recorded while it runs.
func TestRunCreatorCreatesWhatHooksRecord(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 5, 2)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.e.RunCreator(ctx, 20*time.Millisecond, nil) }()
	defer func() { cancel(); <-done }()
	f.waitCreatorLocked()
	for _, wu := range wus {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := 0
		for _, wu := range wus {
			if f.stepState(wu, 1) == "queued" {
				n++
			}
		}
		if n == len(wus) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d next steps created", n, len(wus))
		}
	}
}

// waitCreatorLocked waits until a RunCreator holds the creator lock, so
// that hook calls hand over to it.
func (f *fixture) waitCreatorLocked() {
	f.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		lf, _ := os.OpenFile(filepath.Join(f.root, engine.CreatorLockName), os.O_RDONLY|os.O_CREATE, 0o664)
		err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		lf.Close()
		if err != nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatal("the creator never took its lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A step recorded by another process, which found the creator lock held
// and left the step pending, is created by the running creator all the
// same: that process asks it for a pass, and its idle looks ask the
// database once a second anyway.
func TestRunCreatorCreatesWhatOtherProcessesLeave(t *testing.T) {
	for _, asked := range []bool{true, false} {
		t.Run(map[bool]string{true: "asked", false: "idle look"}[asked], func(t *testing.T) {
			if asked {
				// Only the request for a pass can make the step in time.
				defer engine.SetIdleDBLook(time.Hour)()
			}
			testCreatorTakesOthersSteps(t, asked)
		})
	}
}

func testCreatorTakesOthersSteps(t *testing.T, asked bool) {
	f := newFixture(t)
	wus := f.submitMany("g", 2, 2)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.e.RunCreator(ctx, 20*time.Millisecond, nil) }()
	defer func() { cancel(); <-done }()
	f.waitCreatorLocked()
	other, err := engine.Open(f.ctx, f.root, f.e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, wu := range wus {
		if err := hookCall(f.ctx, other, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
	}
	if !asked {
		os.Remove(filepath.Join(spool.Dir(f.root), ".wait")) // as if the request were lost
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if f.stepState(wus[0], 1) == "queued" && f.stepState(wus[1], 1) == "queued" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("next steps: %s, %s", f.stepState(wus[0], 1), f.stepState(wus[1], 1))
		}
	}
}

// A creator stopped between create_work and recording the steps as queued
// leaves them pending with their work units in BOINC: the next pass finds
// the names taken and records the steps as created, without failing the
// chains or creating anything twice.
func TestCreatedBeforeAStopIsNotCreatedTwice(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 2, 3)
	release := f.holdCreator()
	for _, wu := range wus {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
	}
	f.intake(len(wus))
	release()
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		t.Fatal(err)
	}
	before := f.allWUs()
	// The stop: the work units exist, the steps still say pending.
	if _, err := f.e.State().SQL().ExecContext(f.ctx, `UPDATE steps SET state = 'pending' WHERE step = 1`); err != nil {
		t.Fatal(err)
	}
	if n, err := f.e.CreatePending(f.ctx); err != nil || n != 2 {
		t.Fatalf("CreatePending = %d, %v", n, err)
	}
	for _, wu := range wus {
		if got := f.stepState(wu, 1); got != "queued" {
			t.Fatalf("step 1 after %s is %s, want queued", wu, got)
		}
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Chains {
		if c.State != wire.StateRunning {
			t.Fatalf("chain %s is %s (%s)", c.Name, c.State, c.Error)
		}
	}
	if after := f.allWUs(); after != before {
		t.Fatalf("%d work units, %d before", after, before)
	}
}

// A submission stopped between create_work and recording its work units as
// created leaves its first steps "creating": the creator takes them over
// once they are old, finds their work units in BOINC, and the chains run.
// A step whose work unit never came is created then.
func TestCreatorTakesOverHalfCreatedSteps(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 2, 2)
	before := f.allWUs()
	// The stop: chain 0's work unit exists, chain 1's never came. Chain
	// 0's step was left by an earlier version (no owner, long ago), chain
	// 1's by a process whose lease is gone.
	db := f.e.State().SQL()
	if _, err := db.ExecContext(f.ctx, `UPDATE steps SET state = 'creating', created = 0, owner = '' WHERE step = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(f.ctx, `UPDATE steps SET owner = 'a-process-gone' WHERE wu_name = ?`, wus[1]); err != nil {
		t.Fatal(err)
	}
	dropWU(t, f, wus[1])
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.e.RunCreator(ctx, 20*time.Millisecond, nil) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if f.stepState(wus[0], 0) == "queued" && f.stepState(wus[1], 0) == "queued" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("first steps: %s, %s", f.stepState(wus[0], 0), f.stepState(wus[1], 0))
		}
	}
	if after := f.allWUs(); after != before {
		t.Fatalf("%d work units, %d before", after, before)
	}
	if f.boincWUs(wus[0]) != 1 || f.boincWUs(wus[1]) != 1 {
		t.Fatal("a first step's work unit is missing or doubled")
	}
}

// dropWU removes a work unit from the stand-in's database, as if create_work
// had never inserted it.
func dropWU(t *testing.T, f *fixture, wu string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.Exec(`DELETE FROM workunit WHERE name = ?`, wu); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d work units named %s", n, wu)
	}
}
