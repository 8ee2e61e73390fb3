package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"
)

// The patterns pick the named chains' work units and no other's: not
// those of a chain whose name only starts alike, nor of another group
// whose name differs where a LIKE wildcard would match.
func TestWUPrefixesPickTheChainsOnly(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "wu.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE workunit (name TEXT UNIQUE)`); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"c1-SOAK3_m051-0-1-RND1", "c1-SOAK3_m051-1-2-RND2", "c10-SOAK3_m051-0-1-RND3", "c1-SOAK3xm051-0-1-RND4", "c1-SOAK3_m0511-0-1-RND5", "c2-SOAK3_m051-0-1-RND6"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO workunit VALUES (?)`, n); err != nil {
			t.Fatal(err)
		}
	}
	pats := wuPrefixes("soak3", "m051", []string{"c1"})
	rows, err := db.QueryContext(ctx, `SELECT name FROM workunit WHERE name LIKE ? ESCAPE '!' ORDER BY name`, pats...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if want := []string{"c1-SOAK3_m051-0-1-RND1", "c1-SOAK3_m051-1-2-RND2"}; !slices.Equal(got, want) {
		t.Fatalf("picked %v, want %v", got, want)
	}
}
