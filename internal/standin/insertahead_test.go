package standin

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/sqldb"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// TestNativeInsertAhead: a run that inserts ahead (wucreate.Run.InsertAhead)
// holds its inserts in a transaction of BOINC's database while jobs are
// still added (BOINC's write lock is taken, nothing is visible), makes the
// same rows as a run that inserts at Finish once Finish commits, and
// leaves nothing, and the lock free, when aborted.
func TestNativeInsertAhead(t *testing.T) {
	tp := newProject(t)
	tp.stage("a.coor", "a\n")
	tp.stage("a.psf", "p\n")
	par := boinc.WorkParams{App: "rbtest", TargetUser: 1}
	const n = 1200 // two statements' worth ahead, the rest at Finish
	jobs := func(prefix string) []boinc.Job {
		js := make([]boinc.Job, n)
		for i := range js {
			js[i] = boinc.Job{WUName: fmt.Sprintf("%s_%d", prefix, i), WUTemplate: "templates/rbtest_in", ResultTemplate: "templates/rbtest_out",
				Files: []string{"a.coor", "a.psf"}, Priority: i % 3}
		}
		return js
	}
	target, err := boincdb.ForProject(tp.p, true)
	if err != nil {
		t.Fatal(err)
	}
	// Another writer that gives up at once: it finds BOINC's write lock
	// taken while a run holds rows inserted ahead. SQLite's alone: MariaDB
	// locks rows, not the database, and another writer goes on; there the
	// rows' invisibility before Finish and their equality after it are
	// what is checked.
	lock := target.Engine == sqldb.SQLite
	var other *sql.DB
	if lock {
		if other, err = sql.Open("sqlite", target.DSN+"?_busy_timeout=50&_txlock=immediate"); err != nil {
			t.Fatal(err)
		}
		defer other.Close()
	}
	// canWrite answers what the check expects (want) where it cannot be
	// made.
	canWrite := func(want bool) bool {
		if !lock {
			return want
		}
		tx, err := other.Begin()
		if err != nil {
			return false
		}
		tx.Rollback()
		return true
	}
	ctx := context.Background()
	add := func(r *wucreate.Run, js []boinc.Job) {
		for _, j := range js {
			if err := r.Add(j); err != nil {
				t.Fatal(err)
			}
		}
	}
	db := tp.db()
	start := func(ahead bool) *wucreate.Run {
		r, err := wucreate.Start(ctx, tp.p, db, par, true)
		if err != nil {
			t.Fatal(err)
		}
		if ahead {
			r.InsertAhead()
		}
		return r
	}

	plain := start(false)
	add(plain, jobs("plain"))
	if err := plain.Finish(); err != nil {
		t.Fatal(err)
	}

	r := start(true)
	add(r, jobs("ahead"))
	if canWrite(false) {
		t.Error("BOINC's database takes another writer while a run holds jobs inserted ahead: nothing was inserted ahead")
	}
	if got := tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'ahead_%'`); got != 0 {
		t.Errorf("%d work units visible before Finish", got)
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if !canWrite(true) {
		t.Error("BOINC's write lock still taken after Finish")
	}
	ahead, plainJobs := jobs("ahead"), jobs("plain")
	for i := 0; i < n; i += 97 { // each row compared opens the database
		j, p := ahead[i], plainJobs[i]
		a, b := tp.rowOf(`SELECT * FROM workunit WHERE name = ?`, p.WUName, "id", "name", "create_time", "transition_time", "mod_time", "xml_doc"),
			tp.rowOf(`SELECT * FROM workunit WHERE name = ?`, j.WUName, "id", "name", "create_time", "transition_time", "mod_time", "xml_doc")
		if a == nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: row %v, inserted at Finish %v", j.WUName, b, a)
		}
		if len(tp.asgRows(j.WUName)) != 1 {
			t.Fatalf("%s: %d assignment rows, want 1", j.WUName, len(tp.asgRows(j.WUName)))
		}
	}

	ab := start(true)
	add(ab, jobs("aborted")[:700])
	if canWrite(false) {
		t.Error("nothing was inserted ahead of the run to abort")
	}
	ab.Abort()
	if !canWrite(true) {
		t.Error("BOINC's write lock still taken after Abort")
	}
	if got := tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'aborted_%'`); got != 0 {
		t.Errorf("%d work units of an aborted run exist", got)
	}
}
