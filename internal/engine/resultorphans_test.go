package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
)

// resultFiles lists the files of the results directories of group.
func resultFiles(t *testing.T, f *fixture, group string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(f.root, "results", "*_"+group, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCollectRemovesOrphanResults: an acknowledgement and a purge commit
// in the state before they delete the result files, so a process killed in
// between leaves the files with nothing referring to them. Here the crash
// is the state change made through the store alone. One collection pass
// removes those files, and keeps the results not yet acknowledged and a
// file being taken now for a step still waiting for its outputs.
func TestCollectRemovesOrphanResults(t *testing.T) {
	t.Parallel() // it sleeps past a grace of 0: beside other tests
	f := newFixture(t)
	runChains(f, "acked", "a")
	runChains(f, "purged", "b")
	runChains(f, "kept", "c")
	res, err := f.e.Results(f.ctx, f.u, "acked", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Files {
		names = append(names, r.Name)
	}
	if gone, err := f.e.State().Ack(f.ctx, f.u.ID, "", "acked", names); err != nil || len(gone) == 0 {
		t.Fatalf("acknowledging in the state: %v %v", gone, err)
	}
	if _, _, err := f.e.State().Purge(f.ctx, f.u.ID, "purged", ""); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"acked", "purged", "kept"} {
		if len(resultFiles(t, f, g)) == 0 {
			t.Fatalf("group %s has no result files to begin with", g)
		}
	}
	// A step in BOINC whose record is taking its outputs right now: the
	// file is in the results area, its result not yet recorded.
	wu := f.submit("taking", "d", 2).Chains[0].FirstWU
	pw, err := naming.ParseWU(wu)
	if err != nil {
		t.Fatal(err)
	}
	taking := filepath.Join(f.root, "results", pw.User+"_taking", naming.ResultFile(wu, 0))
	if err := os.MkdirAll(filepath.Dir(taking), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(taking, []byte("4 5 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kept := resultFiles(t, f, "kept")

	time.Sleep(1100 * time.Millisecond) // past a grace of 0, to the second
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"acked", "purged"} {
		if left := resultFiles(t, f, g); len(left) > 0 {
			t.Errorf("group %s: %d result files nothing refers to are left after a collection: %v", g, len(left), left)
		}
	}
	if now := resultFiles(t, f, "kept"); len(now) != len(kept) {
		t.Errorf("results not yet acknowledged: %d files before the collection, %d after", len(kept), len(now))
	}
	if _, err := os.Stat(taking); err != nil {
		t.Errorf("the output being taken for a waiting step was removed: %v", err)
	}
}

// TestOrphanResultsBoundedPerPass: a pass looks at a bounded number of
// result files and the next goes on where it stopped, so every orphan
// goes within a few passes and none is looked at twice before all were.
func TestOrphanResultsBoundedPerPass(t *testing.T) {
	f := newFixture(t)
	engine.SetOrphanScanLimit(t, 4)
	runChains(f, "kept", "c")
	runChains(f, "purged", "a", "b")
	if _, _, err := f.e.State().Purge(f.ctx, f.u.ID, "purged", ""); err != nil {
		t.Fatal(err)
	}
	orphans := len(resultFiles(t, f, "purged"))
	kept := len(resultFiles(t, f, "kept"))
	total := orphans + kept
	time.Sleep(1100 * time.Millisecond)
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	if left := len(resultFiles(t, f, "purged")); left < orphans-4 {
		t.Errorf("one pass limited to 4 files removed %d of %d orphans", orphans-left, orphans)
	}
	for pass := 1; pass <= (total+3)/4; pass++ {
		if _, err := f.e.Collect(f.ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	if left := resultFiles(t, f, "purged"); len(left) > 0 {
		t.Errorf("%d orphans left after covering all %d result files 4 at a time: %v", len(left), total, left)
	}
	if now := len(resultFiles(t, f, "kept")); now != kept {
		t.Errorf("results not yet acknowledged: %d files, %d after the passes", kept, now)
	}
}
