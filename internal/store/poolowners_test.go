package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// TestPoolOwnership: a pooled content is missing for a user until they own
// it (sent it, or their chain reads it); another user's ownership does not
// count; leaving the pool forgets its owners.
func TestPoolOwnership(t *testing.T) {
	ctx := context.Background()
	db, carol := openBatchDB(t)
	dave, err := db.AddUser(ctx, "dave", "hash-dave")
	if err != nil {
		t.Fatal(err)
	}
	x, y := md5n(1), md5n(2)
	if err := db.PoolAddOwned(ctx, carol.ID, []PoolEntry{{x, 10}}); err != nil {
		t.Fatal(err)
	}
	if err := db.PoolAddAll(ctx, []PoolEntry{{y, 20}}); err != nil { // a server default: nobody's
		t.Fatal(err)
	}
	if m, err := db.PoolMissing(ctx, carol.ID, []string{x, y}); err != nil || len(m) != 1 || m[0] != y {
		t.Fatalf("carol: missing %v, %v", m, err)
	}
	if m, err := db.PoolMissing(ctx, dave, []string{x, y}); err != nil || len(m) != 2 {
		t.Fatalf("dave learns of carol's content: missing %v, %v", m, err)
	}
	// dave sends the same bytes: his too; the pool keeps one entry.
	if err := db.PoolAddOwned(ctx, dave, []PoolEntry{{x, 10}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.PoolMissing(ctx, dave, []string{x}); len(m) != 0 {
		t.Fatalf("dave's own upload missing: %v", m)
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM pool WHERE md5 = ?`, x).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d pool entries of one content, %v", n, err)
	}
	// A chain's inputs are its user's.
	if _, err := db.CreateChains(ctx, carol, []NewChain{batchChain("g", "c", y)}); err != nil {
		t.Fatal(err)
	}
	if own, err := db.PoolOwned(ctx, carol.ID, []string{x, y}); err != nil || !own[x] || !own[y] {
		t.Fatalf("carol owns %v, %v", own, err)
	}
	// Removed from the pool (a failed request's content): owners forgotten.
	if err := db.ForgetUnused(ctx, []string{x}, func([]string) {}); err != nil {
		t.Fatal(err)
	}
	if own, _ := db.PoolOwned(ctx, dave, []string{x}); own[x] {
		t.Fatal("ownership outlived the content")
	}
}

// TestPoolOwnersFilledOnUpgrade: the migration that brings ownership makes
// every user the owner of what their chains read (inputs, and outputs
// chained into the next step), so that nothing asks for bytes again after
// an upgrade.
func TestPoolOwnersFilledOnUpgrade(t *testing.T) {
	ctx := context.Background()
	loc := testLocation(t)
	db, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.AddUser(ctx, "carol", "hash-carol")
	if err != nil {
		t.Fatal(err)
	}
	carol := User{ID: id, Name: "carol"}
	dave, err := db.AddUser(ctx, "dave", "hash-dave")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := db.CreateChains(ctx, carol, []NewChain{batchChain("g", "c", md5n(1), md5n(2))})
	if err != nil {
		t.Fatal(err)
	}
	next := &Step{ChainID: cs[0].ID, Step: 1, WU: cs[0].WU(1), State: "pending", Inputs: []string{md5n(3), md5n(2)}}
	if _, _, _, err := db.CompleteStepPooling(ctx, cs[0], 0, nil, []PoolEntry{{md5n(3), 30}}, next); err != nil {
		t.Fatal(err)
	}
	// Back to the schema before ownership; the migrations after it are
	// already in place and stay as they are (their MariaDB forms are
	// idempotent and run again; on SQLite they are skipped).
	ownV := ownershipMigration(t)
	for _, q := range []string{`DROP TABLE pool_owners`, fmt.Sprintf(`DELETE FROM schema_history WHERE version >= %d`, ownV)} {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	back := fmt.Sprintf(`PRAGMA user_version = %d`, ownV-1)
	if onMariaDB() {
		back = fmt.Sprintf(`UPDATE rboinc_schema SET version = %d WHERE id = 1`, ownV-1)
	}
	if _, err := db.sql.ExecContext(ctx, back); err != nil {
		t.Fatal(err)
	}
	db.Close()
	list := slices.Clone(migrations)
	for i, m := range list {
		if m.version > ownV {
			list[i] = migration{version: m.version, name: m.name, fn: func(context.Context, *sql.Tx) error { return nil }}
		}
	}
	if db, _, err = openWith(ctx, loc, list); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Version(ctx); err != nil || v != SchemaVersion() {
		t.Fatalf("version %d, %v", v, err)
	}
	own, err := db.PoolOwned(ctx, carol.ID, []string{md5n(1), md5n(2), md5n(3)})
	if err != nil || len(own) != 3 {
		t.Fatalf("carol owns %v after the upgrade, %v", own, err)
	}
	if own, _ := db.PoolOwned(ctx, dave, []string{md5n(1), md5n(2), md5n(3)}); len(own) != 0 {
		t.Fatalf("dave owns carol's contents after the upgrade: %v", own)
	}
}

// ownershipMigration is the version of the migration that made pool_owners.
func ownershipMigration(t *testing.T) int {
	t.Helper()
	for _, m := range migrations {
		if m.name == "owners of pooled contents" {
			return m.version
		}
	}
	t.Fatal("no migration makes pool_owners")
	return 0
}
