package engine_test

import (
	"context"
	"github.com/rboinc/rboinc/internal/advance"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
)

// spooled lists the entries waiting in the spool.
func (f *fixture) spooled() []string {
	ents, _ := os.ReadDir(filepath.Join(f.root, engine.SpoolDirName))
	var out []string
	for _, d := range ents {
		if d.Name() != ".last-call" {
			out = append(out, d.Name())
		}
	}
	return out
}

// streaming makes the next hook call look like part of a stream of calls,
// which returns without waiting for the creator.
func (f *fixture) streaming() {
	dir := filepath.Join(f.root, engine.SpoolDirName)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, ".last-call"), nil, 0o644)
}

// With a creator running, the hook process only spools: the outputs
// survive BOINC's deletion, and the creator's pass records the step and
// creates the next one.
func TestHookSpoolsWhileCreatorRuns(t *testing.T) {
	f := newFixture(t)
	wu := f.submitMany("g", 1, 3)[0]
	paths := f.outputs(wu)
	release := f.holdCreator()
	call, _ := boinc.ParseHookArgs(append([]string{"7"}, paths...))
	for i := 0; i < 2; i++ { // BOINC may call twice for one work unit
		f.streaming()
		if err := engine.Hook(f.ctx, f.root, call, f.e.Log); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.spooled(); len(got) != 2 {
		t.Fatalf("spool holds %v", got)
	}
	if st := f.stepState(wu, 0); st != "queued" {
		t.Fatalf("step 0 is %s before the creator ran", st)
	}
	for _, p := range paths { // BOINC's file_deleter
		os.Remove(p)
	}
	release()
	if err := f.e.CreatorPass(f.ctx); err != nil {
		t.Fatal(err)
	}
	if st0, st1 := f.stepState(wu, 0), f.stepState(wu, 1); st0 != "done" || st1 != "queued" {
		t.Fatalf("after the creator's pass: step 0 %s, step 1 %s", st0, st1)
	}
	c, _, _ := f.e.State().StepByWU(f.ctx, wu)
	if n := f.boincWUs(c.WU(1)); n != 1 {
		t.Fatalf("%d work units for step 1", n)
	}
	if got := f.spooled(); len(got) != 0 {
		t.Fatalf("spool still holds %v", got)
	}
	res, err := f.e.Results(f.ctx, f.u, "g", "")
	if err != nil || len(res.Files) != 3 || res.Files[0].MD5 != md5s("4 5 6\n") {
		t.Fatalf("results %+v %v", res, err)
	}
	data, err := os.ReadFile(filepath.Join(f.root, "results", "ALICE_g", wu+"_0"))
	if err != nil || string(data) != "4 5 6\n" {
		t.Fatalf("result file: %q %v", data, err)
	}
}

// Without a creator, the hook process does the creator's work itself.
func TestHookWithoutCreator(t *testing.T) {
	f := newFixture(t)
	wu := f.submitMany("g", 1, 2)[0]
	if err := engine.Hook(f.ctx, f.root, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}, f.e.Log); err != nil {
		t.Fatal(err)
	}
	if st := f.stepState(wu, 1); st != "queued" {
		t.Fatalf("step 1 is %s after the hook returned", st)
	}
	if got := f.spooled(); len(got) != 0 {
		t.Fatalf("spool holds %v", got)
	}
}

// A damaged entry is set aside; the entries behind it go on.
func TestSpoolBadEntrySetAside(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 1, 2)
	release := f.holdCreator()
	bad := filepath.Join(f.root, engine.SpoolDirName, "1-bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "call"), []byte("rboinc-hook-call 1\nwu_name x\nfile ../../etc/passwd\n"), 0o644)
	f.streaming()
	if err := engine.Hook(f.ctx, f.root, boinc.HookCall{WUName: wus[0], Files: f.outputs(wus[0])}, f.e.Log); err != nil {
		t.Fatal(err)
	}
	release()
	n, err := advance.IntakeSpool(f.ctx, f.e.Chains())
	if err != nil || n != 1 {
		t.Fatalf("IntakeSpool = %d, %v", n, err)
	}
	if got := f.spooled(); len(got) != 1 || got[0] != ".bad-1-bad" {
		t.Fatalf("spool holds %v", got)
	}
}

// A hook pointed at a directory that is no server root fails (BOINC keeps
// the outputs) and creates nothing there.
func TestHookNeedsServerRoot(t *testing.T) {
	dir := t.TempDir()
	if err := engine.Hook(t.Context(), dir, boinc.HookCall{WUName: "a-B_c-0-2-RND0001", Files: []string{"/nonexistent/a-B_c-0-2-RND0001_0_r1_0"}}, nil); err == nil {
		t.Fatal("no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("wrote %v", ents)
	}
}

// A lone hook call, with a creator running, returns once its next step's
// work unit exists; a call in a stream returns at once.
func TestLoneHookWaitsStreamDoesNot(t *testing.T) {
	f := newFixture(t)
	wus := f.submitMany("g", 2, 3)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.e.RunCreator(ctx, 200*time.Millisecond, nil) }()
	defer func() { cancel(); <-done }()
	f.waitCreatorLocked()
	time.Sleep(50 * time.Millisecond) // no call just before: this one is alone
	if err := engine.Hook(f.ctx, f.root, boinc.HookCall{WUName: wus[0], Files: f.outputs(wus[0])}, f.e.Log); err != nil {
		t.Fatal(err)
	}
	if st := f.stepState(wus[0], 1); st != "queued" {
		t.Fatalf("lone call returned with step 1 %s", st)
	}
	f.streaming()
	if err := engine.Hook(f.ctx, f.root, boinc.HookCall{WUName: wus[1], Files: f.outputs(wus[1])}, f.e.Log); err != nil {
		t.Fatal(err)
	}
	if got := f.spooled(); len(got) != 1 {
		t.Fatalf("a call in a stream waited for the creator: spool holds %v", got)
	}
}
