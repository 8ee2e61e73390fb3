package store

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// groupCounts are what is left of group g's chains in the state: chains
// not purged, their results, and the group_done events.
type groupCounts struct{ live, results, groupDone int }

func countGroup(t *testing.T, db *DB, u User, g string) groupCounts {
	t.Helper()
	var c groupCounts
	for _, q := range []struct {
		n *int
		q string
	}{
		{&c.live, `SELECT count(*) FROM chains WHERE user_id = ? AND grp = ? AND state != 'purged'`},
		{&c.results, `SELECT count(*) FROM results r JOIN chains c ON c.id = r.chain_id WHERE c.user_id = ? AND c.grp = ?`},
		{&c.groupDone, `SELECT count(*) FROM events WHERE user_id = ? AND grp = ? AND type = 'group_done'`},
	} {
		if err := db.sql.QueryRow(q.q, u.ID, g).Scan(q.n); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestPurgeInPiecesLetsOthersWrite: a big group's purge goes in several
// transactions, and a writer waiting for the state's write lock gets it
// between them, not only once the whole purge is over. The answer still
// names every chain once and every result file, the other group is
// untouched, and group_done comes once.
func TestPurgeInPiecesLetsOthersWrite(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	const nchains, nsteps = 60, 100
	bigGroup(t, db, u, "big", nchains, nsteps)
	bigGroup(t, db, u, "other", 3, nsteps)
	other := countGroup(t, db, u, "other")

	var mu sync.Mutex
	var commits, writes []time.Time
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			// A write transaction as any other writer's.
			if err := db.Tx(ctx, func(tx *sql.Tx) error {
				return addEvent(ctx, tx, Chain{UserID: u.ID, Group: "writer"}, EvChainResumed, i, "")
			}); err != nil {
				done <- err
				return
			}
			mu.Lock()
			writes = append(writes, time.Now())
			mu.Unlock()
		}
	}()
	chains, files, err := db.PurgeEach(ctx, u.ID, "big", "", func(cs []Chain, fs []string) {
		mu.Lock()
		commits = append(commits, time.Now())
		mu.Unlock()
	})
	close(stop)
	if werr := <-done; werr != nil {
		t.Fatalf("the other writer: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, c := range chains {
		if seen[c.ID] {
			t.Errorf("chain %s purged twice", c.Name)
		}
		seen[c.ID] = true
	}
	if len(seen) != nchains || len(files) != nchains*(nsteps-2)*2 {
		t.Errorf("purged %d chains and %d files, want %d and %d", len(seen), len(files), nchains, nchains*(nsteps-2)*2)
	}
	if c := countGroup(t, db, u, "big"); c != (groupCounts{0, 0, 1}) {
		t.Errorf("after the purge: %+v, want no live chain, no result, one group_done", c)
	}
	if c := countGroup(t, db, u, "other"); c != other {
		t.Errorf("the other group went from %+v to %+v", other, c)
	}
	if len(commits) < 3 {
		t.Fatalf("the purge went in %d transactions, want several", len(commits))
	}
	between := 0
	for _, w := range writes {
		if w.After(commits[0]) && w.Before(commits[len(commits)-1]) {
			between++
		}
	}
	if between == 0 {
		t.Errorf("no other write got in between the purge's %d transactions (%d writes in all)", len(commits), len(writes))
	}
}

const purgeChildEnv = "RBOINC_STORE_TEST_PURGE_CHILD" // the database a purging child opens

// TestPurgeKilledMidwayIsFinishedByRerun: kill -9 of a process in the
// middle of a big purge leaves each chain purged whole or not at all; the
// purge run again purges the rest, each chain once, leaves no result and
// adds group_done once.
func TestPurgeKilledMidwayIsFinishedByRerun(t *testing.T) {
	if loc := os.Getenv(purgeChildEnv); loc != "" {
		purgeAsChild(t, loc)
		return
	}
	ctx := context.Background()
	loc := testLocation(t)
	db, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.AddUser(ctx, "carol", "hash-carol")
	if err != nil {
		t.Fatal(err)
	}
	u := User{ID: id, Name: "carol"}
	const nchains, nsteps = 80, 100
	bigGroup(t, db, u, "big", nchains, nsteps)

	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPurgeKilledMidwayIsFinishedByRerun$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), purgeChildEnv+"="+loc, "RBOINC_STORE_TEST_BARRIER="+dir)
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once its first piece is committed: in the middle of the
	// next one, or between two.
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "piece")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("the child never purged a piece:\n%s", b)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// Each chain whole: purged with its results gone, or live with all
	// of them.
	rows, err := db.sql.Query(`SELECT c.state, count(r.id) FROM chains c LEFT JOIN results r ON r.chain_id = c.id
		WHERE c.user_id = ? AND c.grp = 'big' GROUP BY c.id, c.state`, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	purged := 0
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			t.Fatal(err)
		}
		switch {
		case state == "purged" && n == 0:
			purged++
		case state != "purged" && n == (nsteps-2)*2:
		default:
			t.Errorf("a chain %s after the kill with %d results", state, n)
		}
	}
	rows.Close()
	if purged == nchains {
		t.Logf("the kill came after the purge's end: nothing is left to finish")
	}
	if c := countGroup(t, db, u, "big"); c.groupDone != 0 && c.live != 0 {
		t.Errorf("group_done before the purge's end: %+v", c)
	}
	chains, _, err := db.Purge(ctx, u.ID, "big", "")
	if err != nil {
		t.Fatal(err)
	}
	if purged+len(chains) != nchains {
		t.Errorf("%d chains purged before the kill and %d by the rerun, want %d in all", purged, len(chains), nchains)
	}
	if c := countGroup(t, db, u, "big"); c != (groupCounts{0, 0, 1}) {
		t.Errorf("after the rerun: %+v, want no live chain, no result, one group_done", c)
	}
	t.Logf("killed with %d of %d chains purged; the rerun purged %d", purged, nchains, len(chains))
}

// purgeAsChild purges group big of the database at loc, telling the
// parent when its first piece is committed.
func purgeAsChild(t *testing.T, loc string) {
	ctx := context.Background()
	db, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.UserByName(ctx, "carol")
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("RBOINC_STORE_TEST_BARRIER")
	_, _, err = db.PurgeEach(ctx, u.ID, "big", "", func([]Chain, []string) {
		os.WriteFile(filepath.Join(dir, "piece"), nil, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The parent kills it; if it finished first, it waits to be.
	time.Sleep(time.Minute)
}
