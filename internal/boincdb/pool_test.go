package boincdb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// burst runs query n times at once through db, each on a connection
// held about 100 ms (the query's own time, or a wait after it), and
// samples count until they are done; it returns the most count gave.
func burst(t *testing.T, db *DB, n int, query string, count func() int) int {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range n {
		wg.Go(func() {
			ctx := context.Background()
			start := time.Now()
			c, err := db.Conn(ctx)
			if err == nil {
				var x any
				err = c.QueryRowContext(ctx, query).Scan(&x)
				time.Sleep(100*time.Millisecond - time.Since(start))
				c.Close()
			}
			if err != nil {
				failed.Add(1)
				t.Log(err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for {
		most = max(most, count())
		select {
		case <-done:
			if failed.Load() > 0 {
				t.Fatalf("%d of %d queries failed", failed.Load(), n)
			}
			return most
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestPoolBoundedMySQL: 200 queries at once through one open BOINC
// database take at most mysqlMaxOpen of MariaDB's connections
// (Threads_connected, on a server of the test's own: the shared one
// counts the other tests' connections too); they all succeed, waiting
// for a connection.
func TestPoolBoundedMySQL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server of its own")
	}
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rbpool")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := mariadbtest.Start(ctx, filepath.Join(dir, "m"))
	if errors.Is(err, mariadbtest.ErrNotInstalled) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	dsn, err := srv.NewDatabase(ctx, "boinc")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probe.SetMaxOpenConns(1)
	threads := func() int {
		var name string
		var n int
		if err := probe.QueryRow("SHOW STATUS LIKE 'Threads_connected'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := threads()
	db, err := Open(ctx, sqldb.Target{Engine: sqldb.MySQL, DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	most := burst(t, db, 200, "SELECT SLEEP(0.1)", threads)
	t.Logf("200 queries at once: at most %d connections to MariaDB, %d before", most, before)
	if most-before > mysqlMaxOpen {
		t.Errorf("200 queries at once took %d connections of MariaDB, want at most %d", most-before, mysqlMaxOpen)
	}
}

// TestPoolBoundedSQLite: the same on SQLite, counted by the pool (no
// server to ask): at most sqliteMaxOpen connections.
func TestPoolBoundedSQLite(t *testing.T) {
	t.Parallel()
	db := openTest(t, sqldb.SQLite, false)
	most := burst(t, db, 32, "SELECT count(*) FROM sqlite_master", func() int { return db.Stats().OpenConnections })
	t.Logf("32 queries at once: at most %d connections", most)
	if most > sqliteMaxOpen {
		t.Errorf("32 queries at once took %d connections, want at most %d", most, sqliteMaxOpen)
	}
}
