package standin

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/sqldb"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// TestNativeInsertAheadOnlyTheTail: a run told how many jobs come
// (wucreate.Run.Expect) leaves BOINC's database free to other writers
// until its last wucreate.AheadTail jobs: a submission of 100,000 chains
// would otherwise hold BOINC's write lock through the whole recording of
// its chains, past the stand-in's daemons' busy timeout. Every job exists
// after Finish all the same.
func TestNativeInsertAheadOnlyTheTail(t *testing.T) {
	t.Parallel()
	tp := newProject(t)
	tp.stage("a.coor", "a\n")
	tp.stage("a.psf", "p\n")
	target, err := boincdb.ForProject(tp.p, true)
	if err != nil {
		t.Fatal(err)
	}
	if target.Engine != sqldb.SQLite {
		t.Skip("a database-wide write lock is SQLite's: MariaDB locks the rows inserted ahead alone")
	}
	other, err := sql.Open("sqlite", target.DSN+"?_busy_timeout=50&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	canWrite := func() bool {
		tx, err := other.Begin()
		if err != nil {
			return false
		}
		tx.Rollback()
		return true
	}
	r, err := wucreate.Start(context.Background(), tp.p, tp.db(), boinc.WorkParams{App: "rbtest"}, true)
	if err != nil {
		t.Fatal(err)
	}
	const before = 1200 // more than two statements' worth
	n := before + wucreate.AheadTail + 1
	r.InsertAhead()
	r.Expect(n)
	for i := range n {
		if i == before && (!canWrite() || r.InsertedAhead()) {
			t.Fatalf("after %d of %d jobs, BOINC's write lock is taken already: a run holds it from its first jobs, not its last %d", before, n, wucreate.AheadTail)
		}
		if err := r.Add(boinc.Job{WUName: fmt.Sprintf("tail_%d", i), WUTemplate: "templates/rbtest_in", ResultTemplate: "templates/rbtest_out",
			Files: []string{"a.coor", "a.psf"}}); err != nil {
			t.Fatal(err)
		}
	}
	if canWrite() || !r.InsertedAhead() {
		t.Error("the last jobs were not inserted ahead")
	}
	if got := tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'tail_%'`); got != 0 {
		t.Errorf("%d work units visible before Finish", got)
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if got := tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'tail_%'`); got != n {
		t.Errorf("%d work units after Finish, want %d", got, n)
	}
	if !canWrite() {
		t.Error("BOINC's write lock still taken after Finish")
	}
}
