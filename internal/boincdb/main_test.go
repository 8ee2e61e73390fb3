package boincdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/sqldb"
)

func TestMain(m *testing.M) { mariadbtest.Main(m) }

// engines runs f on a fresh database of each engine, with BOINC's tables.
func engines(t *testing.T, f func(t *testing.T, db *DB)) {
	for _, e := range []sqldb.Engine{sqldb.SQLite, sqldb.MySQL} {
		t.Run(string(e), func(t *testing.T) {
			// A database of its own each: both at once (MariaDB's side
			// mostly waits on its server).
			t.Parallel()
			f(t, openTest(t, e, true))
		})
	}
}

func openTest(t *testing.T, e sqldb.Engine, tables bool) *DB {
	t.Helper()
	target := sqldb.Target{Engine: sqldb.SQLite, DSN: filepath.Join(t.TempDir(), "boinc.db")}
	if e == sqldb.MySQL {
		target = sqldb.Target{Engine: sqldb.MySQL, DSN: mariadbtest.NewDB(t)}
	}
	db, err := Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if tables {
		if err := db.CreateTables(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return db
}
