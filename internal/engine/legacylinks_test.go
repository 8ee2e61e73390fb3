package engine_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestLegacyLinkClaimedByBOINC: BOINC's job-file staging (job_file.php)
// finds rboinc's jf_<md5> link of a content it is asked for, records it in
// its job_file table and its batch's work units read it. When rboinc's own
// work units no longer need it, collection must leave it to BOINC's
// job-file deleter (the mirror of BOINC's deleter removing rboinc's
// input); rboinc's other jf_ links go as before.
func TestLegacyLinkClaimedByBOINC(t *testing.T) {
	f := newFixture(t)
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	_, s0, err := f.e.State().StepByWU(f.ctx, wu)
	if err != nil {
		t.Fatal(err)
	}
	legacy := makeLegacyJF(t, f, wu, s0.Inputs, false)
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(legacy) < 2 {
		t.Fatalf("want two distinct inputs, have %d", len(legacy))
	}
	// BOINC's query_files found the first in download/ and took it.
	if _, err := db.Exec(`INSERT INTO job_file (name, create_time, delete_time) VALUES (?, ?, ?)`,
		filepath.Base(legacy[0]), time.Now().Unix(), time.Now().Add(24*time.Hour).Unix()); err != nil {
		t.Fatal(err)
	}
	f.world(false, true)
	f.waitChain("g", "c1", wire.StateDone, 2*time.Minute)
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy[0]); err != nil {
		t.Errorf("collection removed a jf_ file BOINC's job-file staging uses: %v", err)
	}
	if _, err := os.Stat(legacy[0] + ".md5"); err != nil {
		t.Errorf("collection removed the sidecar of a jf_ file BOINC's job-file staging uses: %v", err)
	}
	if _, err := os.Stat(legacy[1]); err == nil {
		t.Errorf("%s (rboinc's alone) left after collection", legacy[1])
	}
}
