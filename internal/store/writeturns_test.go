package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestWritersTakeTurns: a writer of one process gets its turn beside
// another that commits write transaction after write transaction, each far
// shorter than the busy timeout (the native assimilator's pass beside a
// busy server, issue 31). Without turns SQLite's busy handler, which polls,
// mostly finds the lock taken, and the writer fails with SQLITE_BUSY.
func TestWritersTakeTurns(t *testing.T) {
	if onMariaDB() {
		t.Skip("SQLite's writers: MariaDB queues the waiters for its lock row itself")
	}
	old := sqliteBusyTimeout
	sqliteBusyTimeout = 1500 * time.Millisecond
	t.Cleanup(func() { sqliteBusyTimeout = old })
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	server, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	pass, err := Open(ctx, path) // as another process would
	if err != nil {
		t.Fatal(err)
	}
	defer pass.Close()
	write := func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET name = name WHERE id < 0`)
		return err
	}
	const hold = 30 * time.Millisecond
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := server.Tx(ctx, func(tx *sql.Tx) error { time.Sleep(hold); return write(tx) }); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(100 * time.Millisecond)
	for i := range 5 {
		t0 := time.Now()
		if err := pass.Tx(ctx, write); err != nil {
			t.Fatalf("write %d waited %s behind transactions of %s each and failed: %v", i, time.Since(t0).Round(time.Millisecond), hold, err)
		}
		if d := time.Since(t0); d > 10*hold {
			t.Errorf("write %d waited %s behind transactions of %s each", i, d.Round(time.Millisecond), hold)
		}
	}
}
