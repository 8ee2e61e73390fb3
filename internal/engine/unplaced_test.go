package engine_test

import (
	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/engine"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestUnplaceableHookCallKeepsOutputs: a hook call for a work unit named
// like rboinc's that matches no step of a chain (here: a step the chain
// does not have) is not acknowledged as done while its outputs would go:
// they are kept, through a hook call (spooled, then the creator's pass) and
// through a spool entry the creator's intake finds, and
// the chain the name points to says so in its reason. A foreign work unit
// is still ignored.
func TestUnplaceableHookCallKeepsOutputs(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 3).Chains[0].FirstWU
	w, err := naming.ParseWU(wu0)
	if err != nil {
		t.Fatal(err)
	}
	w.Step, w.NSteps = 5, 9 // no such step
	stray := w.String()

	// A hook call: spool.Accept, then the creator's pass.
	outs := f.outputs(stray)
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: stray, WUID: 77, Files: outs}); err != nil {
		t.Fatal(err)
	}
	// BOINC's file deleter takes its copies.
	for _, p := range outs {
		os.Remove(p)
	}
	kept := unplacedEntries(t, f.root)
	if len(kept) != 1 {
		t.Fatalf("%d unplaced entries kept, want 1", len(kept))
	}
	for k, want := range []string{"4 5 6\n", "0.1 0.1 0.1\n", "log\n"} {
		matches, _ := filepath.Glob(filepath.Join(kept[0], "*_"+string(rune('0'+k))))
		if len(matches) != 1 {
			t.Fatalf("output %d not kept in %s: %v", k, kept[0], matches)
		}
		if b, _ := os.ReadFile(matches[0]); string(b) != want {
			t.Fatalf("output %d kept as %q", k, b)
		}
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "c1")
	if err != nil || len(st.Chains) != 1 {
		t.Fatal(st, err)
	}
	if c := st.Chains[0]; c.State != wire.StateRunning || !strings.Contains(c.Error, "needs attention") || !strings.Contains(c.Error, stray) || !strings.Contains(c.Error, kept[0]) {
		t.Fatalf("the chain does not show the problem: %+v", c)
	}

	// An entry already in the spool, taken in by the creator's intake.
	w.Step = 6
	stray2 := w.String()
	if _, err := spool.Write(f.root, boinc.HookCall{WUName: stray2, Files: f.outputs(stray2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := advance.IntakeSpool(f.ctx, f.e.Chains()); err != nil {
		t.Fatal(err)
	}
	if n := len(unplacedEntries(t, f.root)); n != 2 {
		t.Fatalf("%d unplaced entries after the spooled call, want 2", n)
	}
	if names, _ := spool.Entries(f.root); len(names) != 0 {
		t.Fatalf("entries still waiting: %v", names)
	}

	// Not rboinc's shape: ignored, nothing kept.
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: "someone_elses_wu", Files: f.outputs("someone_elses_wu")}); err != nil {
		t.Fatal(err)
	}
	if n := len(unplacedEntries(t, f.root)); n != 2 {
		t.Fatalf("a foreign work unit was kept")
	}
}

func unplacedEntries(t *testing.T, root string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(spool.Dir(root), spool.UnplacedPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnreadableHookCallKeepsOutputs: a call rboinc cannot read (here an
// unknown result naming, and outputs of another work unit than the token
// names) whose files name one of rboinc's work units is kept, outputs and
// all, with its reason, and the chain says so; handed back to the creator
// unchanged, it is set aside again rather than block every chain or lose
// its outputs. A call that does not look like rboinc's is left alone.
func TestUnreadableHookCallKeepsOutputs(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 3).Chains[0].FirstWU
	up := f.e.Proj.UploadPath(wu0 + "_x7_r1_0") // no BOINC names results so (yet)
	os.MkdirAll(filepath.Dir(up), 0o755)
	os.WriteFile(up, []byte("4 5 6\n"), 0o644)
	args := []string{"1234", up}
	_, perr := boinc.ParseHookArgs(args)
	if perr == nil {
		t.Fatal("the unknown naming parsed; pick another")
	}
	kept, err := engine.KeepUnreadable(f.ctx, f.root, args, perr, f.e.Log)
	if err != nil || !kept {
		t.Fatalf("kept %v, %v", kept, err)
	}
	os.Remove(up) // BOINC's file deleter
	entries := unplacedEntries(t, f.root)
	if len(entries) != 1 {
		t.Fatalf("%d entries kept, want 1", len(entries))
	}
	if b, err := os.ReadFile(filepath.Join(entries[0], filepath.Base(up))); err != nil || string(b) != "4 5 6\n" {
		t.Fatalf("output kept as %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(entries[0], spool.ReasonFile)); !strings.Contains(string(b), "cannot read the hook's call") || !strings.Contains(string(b), "1234 "+up) {
		t.Fatalf("reason file %q", b)
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "c1")
	if err != nil || len(st.Chains) != 1 {
		t.Fatal(st, err)
	}
	if c := st.Chains[0]; c.State != wire.StateRunning || c.StepsDone != 0 || !strings.Contains(c.Error, "needs attention") || !strings.Contains(c.Error, entries[0]) {
		t.Fatalf("the chain does not show the problem: %+v", c)
	}

	// The administrator hands it back, the cause not fixed: set aside
	// again, and the chain's own steps still go on.
	back := filepath.Join(spool.Dir(f.root), strings.TrimPrefix(filepath.Base(entries[0]), spool.UnplacedPrefix))
	if err := os.Rename(entries[0], back); err != nil {
		t.Fatal(err)
	}
	if _, err := advance.IntakeSpool(f.ctx, f.e.Chains()); err != nil {
		t.Fatalf("the creator stopped on it: %v", err)
	}
	if n := len(unplacedEntries(t, f.root)); n != 1 {
		t.Fatalf("%d entries kept after the hand-back, want 1", n)
	}
	if b, err := os.ReadFile(filepath.Join(unplacedEntries(t, f.root)[0], filepath.Base(up))); err != nil || string(b) != "4 5 6\n" {
		t.Fatalf("output after the hand-back %q, %v", b, err)
	}

	// A token naming one work unit, outputs of another: kept as well.
	other := strings.Replace(wu0, "c1-", "c2-", 1)
	outs := f.outputs(other)
	args = append([]string{wu0}, outs...)
	if _, perr = boinc.ParseHookArgs(args); perr == nil {
		t.Fatal("mismatched outputs parsed")
	}
	if kept, err := engine.KeepUnreadable(f.ctx, f.root, args, perr, f.e.Log); err != nil || !kept {
		t.Fatalf("mismatch: kept %v, %v", kept, err)
	}
	if n := len(unplacedEntries(t, f.root)); n != 2 {
		t.Fatalf("%d entries kept, want 2", n)
	}

	// Not rboinc's: nothing kept.
	for _, a := range [][]string{{"12", "/p/upload/3f/someone_x_r1_0"}, {"--error", "3", "1140"}, {wu0}} {
		if kept, err := engine.KeepUnreadable(f.ctx, f.root, a, perr, f.e.Log); kept || err != nil {
			t.Fatalf("%q: kept %v, %v", a, kept, err)
		}
	}
	if n := len(unplacedEntries(t, f.root)); n != 2 {
		t.Fatalf("%d entries kept, want 2", n)
	}
}
