package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestMySQLQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT id FROM users WHERE name = ?`, `SELECT id FROM rboinc_users WHERE name = ?`},
		// Literals and qualified columns keep their words; prefixed names
		// and index names are not prefixed twice.
		{`SELECT c.steps_done FROM chains c WHERE c.state != 'users' AND type = 'it''s pool'`, `SELECT c.steps_done FROM rboinc_chains c WHERE c.state != 'users' AND type = 'it''s pool'`},
		{`DELETE FROM results WHERE EXISTS (SELECT 1 FROM chains c WHERE c.id = results.chain_id) RETURNING file`,
			`DELETE FROM rboinc_results WHERE EXISTS (SELECT 1 FROM rboinc_chains c WHERE c.id = rboinc_results.chain_id) RETURNING file`},
		{`CREATE INDEX IF NOT EXISTS steps_queued ON rboinc_steps(state)`, `CREATE INDEX IF NOT EXISTS steps_queued ON rboinc_steps(state)`},
		{`INSERT OR IGNORE INTO step_attempts(wu_name) VALUES (?)`, `INSERT IGNORE INTO rboinc_step_attempts(wu_name) VALUES (?)`},
		{`INSERT INTO pool(md5, size, touched) VALUES (?,?,?) ON CONFLICT(md5) DO UPDATE SET touched = excluded.touched`,
			`INSERT INTO rboinc_pool(md5, size, touched) VALUES (?,?,?) ON DUPLICATE KEY UPDATE touched = VALUES(touched)`},
		{`UPDATE chains SET steps_done = max(steps_done, ?) WHERE id = ?`, `UPDATE rboinc_chains SET steps_done = GREATEST(steps_done, ?) WHERE id = ?`},
		{`SELECT max(id) FROM events`, `SELECT max(id) FROM rboinc_events`},
		{`SELECT 1 FROM chains WHERE (grp, name) IN (VALUES (?,?),(?,?))`, `SELECT 1 FROM rboinc_chains WHERE (grp, name) IN ( (?,?),(?,?))`},
		{`SELECT s.wu_name FROM steps s ORDER BY s.rowid LIMIT ?`, `SELECT s.wu_name FROM rboinc_steps s ORDER BY s.seq LIMIT ?`},
		{`SELECT 'unterminated`, `SELECT 'unterminated`},
	} {
		if got := mysqlQuery(c.in); got != c.want {
			t.Errorf("mysqlQuery(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestMySQLSchemaCoversMigrations: every migration has its MariaDB form.
func TestMySQLSchemaCoversMigrations(t *testing.T) {
	for _, m := range migrations {
		if _, ok := mysqlSchema[m.version]; !ok && m.sql != "" {
			t.Errorf("migration %d (%s) has no entry in mysqlSchema", m.version, m.name)
		}
	}
}

// TestUserNamesCaseInsensitive holds on both engines: one alice, whatever
// the case, and case kept as given.
func TestUserNamesCaseInsensitive(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.AddUser(ctx, "Alice", "h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddUser(ctx, "aLICE", "h2"); !errors.Is(err, ErrExists) {
		t.Fatalf("second alice: %v", err)
	}
	if u, err := db.UserByName(ctx, "alice"); err != nil || u.Name != "Alice" {
		t.Fatalf("%+v %v", u, err)
	}
	// Chain names are compared exactly: c and C are two chains.
	u, _ := db.UserByName(ctx, "alice")
	if _, err := db.CreateChains(ctx, u, []NewChain{newChain("c"), newChain("C")}); err != nil {
		t.Fatal(err)
	}
}

// TestQuotaAcrossHandles: two handles on one database (two processes, or
// two hosts on one MariaDB) submitting at once cannot pass the limit of
// chains in progress together.
func TestQuotaAcrossHandles(t *testing.T) {
	ctx := context.Background()
	loc := testLocation(t)
	var dbs []*DB
	for range 2 {
		db, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	id, err := dbs[0].AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	u := User{ID: id, Name: "alice"}
	const limit, tries = 7, 40
	var mu sync.Mutex
	ok, quota := 0, 0
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			_, err := dbs[i%2].CreateChainsWithin(ctx, u, []NewChain{newChain(fmt.Sprint("c", i))}, limit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrQuota):
				quota++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok != limit || quota != tries-limit {
		t.Fatalf("%d created, %d refused; want %d and %d", ok, quota, limit, tries-limit)
	}
	use, err := dbs[1].UsageOf(ctx, id)
	if err != nil || use.RunningChains != limit {
		t.Fatalf("%+v %v", use, err)
	}
}

// TestQueuedDoesNotUndoDone: a creator that records its work unit as
// created after BOINC finished it and another process recorded the step
// done leaves the step done (else the step would be completed twice).
func TestQueuedDoesNotUndoDone(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	id, _ := db.AddUser(ctx, "alice", "h")
	cs, err := db.CreateChains(ctx, User{ID: id, Name: "alice"}, []NewChain{newChain("c")})
	if err != nil {
		t.Fatal(err)
	}
	wu := cs[0].WU(0)
	if done, _, _, err := db.CompleteStep(ctx, cs[0], 0, nil, nil); err != nil || !done {
		t.Fatalf("complete: %v %v", done, err)
	}
	if err := db.SetStepState(ctx, []string{wu}, StateQueued); err != nil {
		t.Fatal(err)
	}
	if _, s, err := db.StepByWU(ctx, wu); err != nil || s.State != "done" {
		t.Fatalf("step after a late 'queued': %q %v", s.State, err)
	}
}
