package engine_test

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/sqldb"
	"github.com/rboinc/rboinc/internal/store"
)

// TestBoincWriterBesideLargeNativeSubmission: another writer of BOINC's
// database (the stand-in's daemons, the assimilator) waits for a large
// native submission less than the stand-in's busy timeout (10 s). Run by
// hand: RBOINC_TEST_LOCKHOLD_CHAINS=100000 (a submission's most) gives the
// longest waits of a BOINC writer and of a state writer.
func TestBoincWriterBesideLargeNativeSubmission(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RBOINC_TEST_LOCKHOLD_CHAINS"))
	if n == 0 {
		t.Skip("set RBOINC_TEST_LOCKHOLD_CHAINS to a number of chains")
	}
	e := nativeRootCreate(t, string(sqldb.SQLite), engine.CreateNative)
	id, err := e.State().AddUser(context.Background(), "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	u := store.User{ID: id, Name: "alice"}
	bdb, err := e.OpenBoincDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	stateW := func() error { return e.State().Tx(context.Background(), func(tx *sql.Tx) error { return nil }) }
	var stop atomic.Bool
	done := make(chan [2]time.Duration)
	probe := func(i int, f func() error) {
		var worst time.Duration
		for !stop.Load() {
			t0 := time.Now()
			if err := f(); err != nil {
				t.Errorf("a writer of %s failed beside the submission: %v", [2]string{"BOINC's database", "the state database"}[i], err)
			}
			worst = max(worst, time.Since(t0))
			time.Sleep(2 * time.Millisecond)
		}
		var r [2]time.Duration
		r[i] = worst
		done <- r
	}
	go probe(0, func() error {
		tx, err := bdb.BeginTx(context.Background(), nil)
		if err != nil {
			return err
		}
		tx.Exec(`UPDATE app SET name = name WHERE id = -1`)
		return tx.Commit()
	})
	go probe(1, stateW)
	t0 := time.Now()
	submitChains(t, e, u, "g", n, 2)
	took := time.Since(t0)
	stop.Store(true)
	a, b := <-done, <-done
	w := [2]time.Duration{max(a[0], b[0]), max(a[1], b[1])}
	t.Logf("chains %d: submission %v; a BOINC writer waited at most %v, a state writer %v", n, took, w[0], w[1])
	if w[0] >= 10*time.Second {
		t.Errorf("a BOINC writer waited %v beside the submission: past the stand-in's busy timeout", w[0])
	}
}
