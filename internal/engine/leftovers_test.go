package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/workflow/wire"
)

// filesUnder lists the regular files and links under dir (relative), or
// none when dir does not exist.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestNothingLeftAfterPurgingEverything: after a small workload (chains
// done and retrieved, done and not retrieved, stopped midway, uploads
// used and left), purging every group of every user and one collection
// leaves nothing of rboinc's: no state rows but those a documented
// retention keeps (docs/operations.md), no pooled content, result file,
// staged download link, spool entry, upload collection nor temporary file.
func TestNothingLeftAfterPurgingEverything(t *testing.T) {
	t.Parallel() // it sleeps past a grace of 0: beside other tests
	f := newFixture(t)
	runChains(f, "done", "a", "b")
	runChains(f, "unretrieved", "c")
	f.submit("stopped", "d", 3)
	if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "stopped"}); err != nil {
		t.Fatal(err)
	}
	res, err := f.e.Results(f.ctx, f.u, "done", "")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, r := range res.Files {
		files = append(files, r.Name)
	}
	if _, err := f.e.Ack(f.ctx, f.u, wire.AckRequest{Group: "done", Files: files}); err != nil {
		t.Fatal(err)
	}
	st, err := f.e.State().Chains(f.ctx, f.u.ID, "stopped", "d")
	if err != nil || len(st) != 1 {
		t.Fatalf("the stopped chain: %v %v", st, err)
	}
	for _, g := range []string{"done", "unretrieved", "stopped"} {
		if _, err := f.e.Purge(f.ctx, f.u, wire.ChainRef{Group: g}); err != nil {
			t.Fatal(err)
		}
	}
	// BOINC finishes the purged chain's work unit it still held.
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: st[0].WU(0), Files: f.outputs(st[0].WU(0))}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // contents untouched for a (whole) second: past a grace of 0
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}

	counts, err := f.e.State().RowCounts(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for tbl, n := range counts {
		if n > 0 && !retained[tbl] {
			rows = append(rows, tbl)
		}
	}
	sort.Strings(rows)
	for _, tbl := range rows {
		t.Errorf("table %s keeps %d rows after everything was purged", tbl, counts[tbl])
	}
	for _, dir := range []string{f.e.Pool.Dir, filepath.Join(f.root, "results"), filepath.Join(f.root, "spool"), filepath.Join(f.root, "dav")} {
		if left := filesUnder(t, dir); len(left) > 0 {
			t.Errorf("%s keeps %d files after everything was purged: %v", dir, len(left), left)
		}
	}
	var staged []string
	for _, p := range filesUnder(t, f.e.Proj.DownloadDir) {
		if fi, err := os.Lstat(filepath.Join(f.e.Proj.DownloadDir, p)); err == nil && fi.Mode()&fs.ModeSymlink != 0 || strings.Contains(p, ".rboinc_") {
			staged = append(staged, p)
		}
	}
	if len(staged) > 0 {
		t.Errorf("the download hierarchy keeps %d links rboinc staged: %v", len(staged), staged)
	}
	for _, p := range filesUnder(t, f.root) {
		base := filepath.Base(p)
		if strings.HasSuffix(base, ".tmp") || strings.HasPrefix(base, ".rboinc_") || strings.HasPrefix(base, ".new-") {
			t.Errorf("a temporary file is left: %s", p)
		}
	}
}

// retained are the state tables whose rows outlive a purge by design
// (docs/operations.md, "What a purge leaves"): the users, the schema's
// own, the server's counters and latency histograms, the live processes'
// leases (this test's), the events (kept event_retention days), and the
// purged chains (a name's work units are never named alike again); their
// steps go at a collection once BOINC no longer holds them.
var retained = map[string]bool{
	"users": true, "schema_history": true, "notify_cursor": true, "counters": true, "latency": true,
	"process_leases": true, "events": true, "chains": true,
}
