package e2e

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// scriptTKey holds a script's testing.TB in its Values (Setup puts it).
type scriptTKey struct{}

// rbmariadb VAR: a new, empty MariaDB database of the script's own on the
// test binary's private server; VAR is set to its mysql://... address.
// Skips the script when no server is installed (fails under CI's
// RBOINC_NEED_MARIADB=1).
func cmdMariaDB(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: rbmariadb VAR")
	}
	tb, ok := ts.Value(scriptTKey{}).(testing.TB)
	if !ok {
		ts.Fatalf("rbmariadb: the script's test is not a testing.TB")
	}
	ts.Setenv(args[0], "mysql://"+mariadbtest.NewDB(tb))
}

// rbstaterows URL TABLE N: the MariaDB database at URL (mysql://...) has
// N rows in TABLE (rboinc's name, without the rboinc_ prefix), N a number
// or >0.
func cmdStateRows(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: rbstaterows URL TABLE N")
	}
	dsn, ok := strings.CutPrefix(args[0], "mysql://")
	if !ok {
		ts.Fatalf("rbstaterows: %q is no mysql:// address", args[0])
	}
	db, err := sql.Open("mysql", dsn)
	ts.Check(err)
	defer db.Close()
	var n int
	ts.Check(db.QueryRow("SELECT count(*) FROM `rboinc_" + args[1] + "`").Scan(&n))
	if args[2] == ">0" {
		if n == 0 {
			ts.Fatalf("rboinc_%s is empty", args[1])
		}
		return
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	if n != want {
		ts.Fatalf("rboinc_%s has %d rows, want %d", args[1], n, want)
	}
}
