package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/boinc"
	"github.com/rboinc/rboinc/workflow/naming"
	"github.com/rboinc/rboinc/workflow/spool"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestUnplaceableHookCallKeepsOutputs: a hook call for a work unit named
// like rboinc's that matches no step of a chain (here: a step the chain
// does not have) is not acknowledged as done while its outputs would go:
// they are kept, through the synchronous hook and through the spool, and
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

	// The synchronous path.
	outs := f.outputs(stray)
	if err := f.e.Advance(f.ctx, boinc.HookCall{WUName: stray, WUID: 77, Files: outs}); err != nil {
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

	// Through the spool, as rboinc-hook hands calls to the creator.
	w.Step = 6
	stray2 := w.String()
	if _, err := spool.Write(f.root, boinc.HookCall{WUName: stray2, Files: f.outputs(stray2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.IntakeSpool(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(unplacedEntries(t, f.root)); n != 2 {
		t.Fatalf("%d unplaced entries after the spooled call, want 2", n)
	}
	if names, _ := spool.Entries(f.root); len(names) != 0 {
		t.Fatalf("entries still waiting: %v", names)
	}

	// Not rboinc's shape: ignored, nothing kept.
	if err := f.e.Advance(f.ctx, boinc.HookCall{WUName: "someone_elses_wu", Files: f.outputs("someone_elses_wu")}); err != nil {
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
