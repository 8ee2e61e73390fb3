package store

import (
	"context"
	"testing"
)

// TestAttemptOrderAcrossUpgrade: earlier attempts recorded before the
// upgrade are listed in the order they ended (MariaDB numbers them so in
// the upgrade, SQLite kept their order of insertion), not by name, and one
// recorded after the upgrade comes after them whatever its figures.
func TestAttemptOrderAcrossUpgrade(t *testing.T) {
	ctx := context.Background()
	loc := testLocation(t)
	last := -1
	for i, m := range migrations {
		if m.name == "earlier attempts in their order of insertion" {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no migration orders the earlier attempts: this test upgrades to it from the one before")
	}
	old, _, err := openWith(ctx, loc, migrations[:last])
	if err != nil {
		t.Fatal(err)
	}
	uid, err := old.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	// The chain in the old schema's columns (today's CreateChains writes
	// columns of later versions).
	var chainID int64
	if err := old.sql.QueryRowContext(ctx, `INSERT INTO chains(user_id, grp, name, queue, app, tag, nsteps, priority, params, wu_tmpl, res_tmpl, layout, state, created, updated)
		VALUES (?, 'g', 'c', 'q', 'a', '0000', 1, 0, '{}', '', '', '{}', 'running', 1, 1) RETURNING id`, uid).Scan(&chainID); err != nil {
		t.Fatal(err)
	}
	cs := []Chain{{ID: chainID}}
	// Named against their order.
	for _, a := range []struct {
		wu    string
		n     int
		ended int64
	}{{"wb", 1, 100}, {"wa", 2, 200}} {
		if _, err := old.sql.ExecContext(ctx, `INSERT INTO step_attempts(wu_name, chain_id, step, attempt, reason, ended) VALUES (?, ?, 0, ?, 'r', ?)`, a.wu, cs[0].ID, a.n, a.ended); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, _, err := openWith(ctx, loc, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO step_attempts(wu_name, chain_id, step, attempt, reason, ended) VALUES ('w0', ?, 0, 1, 'r', 50)`, cs[0].ID); err != nil {
		t.Fatal(err)
	}
	_, atts, err := db.ChainSteps(ctx, cs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range atts {
		got = append(got, a.WU)
	}
	want := []string{"wb", "wa", "w0"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("earlier attempts %v, want %v", got, want)
	}
}
