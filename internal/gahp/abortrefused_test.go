package gahp_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAbortCancelRefused: BOINC_ABORT_JOBS whose work units BOINC refused
// to cancel answers an error, not NULL: HTCondor must not take them as
// gone while they still run.
func TestAbortCancelRefused(t *testing.T) {
	p := newProject(t)
	dir := t.TempDir()
	c := p.session(dir)
	if r := c.request(batchLine(t, dir, 1, "b", 1, 1), time.Minute); r != "1 NULL" {
		t.Fatalf("submission: %q", r)
	}
	db, err := sql.Open("sqlite", filepath.Join(p.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE UPDATE ON workunit BEGIN SELECT RAISE(ABORT, 'cancel refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	r := c.request(`BOINC_ABORT_JOBS 2 b#7.0`, time.Minute)
	if !strings.HasPrefix(r, "2 abort_jobs()\\ returned\\ ") || !strings.Contains(r, "BOINC\\ did\\ not\\ cancel") {
		t.Fatalf("abort with the cancel refused: %q, want an error saying BOINC did not cancel", r)
	}
}
