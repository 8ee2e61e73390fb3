package engine_test

import (
	"bytes"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestAbortCancelRefusedIsAFailure: chains aborted while BOINC refuses to
// cancel their work units come back with Failed set (the clients exit
// non-zero), worded for the user, the database's error only in the log.
func TestAbortCancelRefusedIsAFailure(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	f.e.Log = slog.New(slog.NewTextHandler(&logs, nil))
	wu := f.submit("g", "c1", 3).Chains[0].FirstWU
	if f.boincWUs(wu) != 1 {
		t.Fatalf("the first step's work unit %s is not in BOINC", wu)
	}
	// BOINC's database refuses every change of a work unit.
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE UPDATE ON workunit BEGIN SELECT RAISE(ABORT, 'cancel refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	r, err := f.e.Abort(f.ctx, f.u, wire.ChainRef{Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 1 || r.Failed == "" || !strings.Contains(r.Failed, "BOINC did not cancel") {
		t.Fatalf("abort with the cancel refused: %+v, want 1 chain and Failed saying BOINC did not cancel", r)
	}
	if !strings.Contains(r.Message, r.Failed) {
		t.Errorf("the message %q does not say the failure (older clients read only it)", r.Message)
	}
	for _, leak := range []string{"refused by the test", "workunit", "standin.db"} {
		if strings.Contains(r.Message+r.Failed, leak) {
			t.Errorf("the answer shows BOINC's database error (%q): %+v", leak, r)
		}
	}
	if !strings.Contains(logs.String(), "cancel refused by the test") {
		t.Errorf("the cause is not logged:\n%s", logs.String())
	}
}
