package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

// rbsql DB FILE: run the SQL of FILE on the SQLite database DB (made if
// missing), as an older or newer rboinc would have left it. A FILE
// starting with @repo/ is in the repository (the store's fixtures).
func cmdSQL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rbsql DB FILE")
	}
	file := ts.MkAbs(args[1])
	if rest, ok := strings.CutPrefix(args[1], "@repo/"); ok {
		file = filepath.Join(repoDir, rest)
	}
	text, err := os.ReadFile(file)
	ts.Check(err)
	db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(string(text))
	ts.Check(err)
}
