package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// loadFixture makes a database file from the text dump of one made by the
// release before schema versions.
func loadFixture(t *testing.T) (path string, rows map[string]int) {
	t.Helper()
	dump, err := os.ReadFile(filepath.Join("testdata", "state-v0.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "state.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	rows = map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^INSERT INTO (\w+)\(`).FindAllStringSubmatch(string(dump), -1) {
		rows[m[1]]++
	}
	return path, rows
}

// schemaOf is the database's schema, normalized: what each table and index
// is, sorted.
func schemaOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	rs, err := db.Query(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var b strings.Builder
	for rs.Next() {
		var typ, name, text string
		rs.Scan(&typ, &name, &text)
		text = strings.Join(strings.Fields(strings.Replace(text, "IF NOT EXISTS ", "", 1)), " ")
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, text)
	}
	return b.String()
}

// TestUpgradeFromPreviousRelease: a database made by the release before
// schema versions opens, every row survives, and its schema ends equal to
// a fresh database's.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	ctx := context.Background()
	path, want := loadFixture(t)
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Version(ctx); err != nil || v != SchemaVersion() {
		t.Fatalf("version %d %v, want %d", v, err, SchemaVersion())
	}
	if len(want) < 7 {
		t.Fatalf("the fixture has rows of %d tables only: %v", len(want), want)
	}
	for table, n := range want {
		var got int
		if err := db.sql.QueryRow("SELECT count(*) FROM " + table).Scan(&got); err != nil || got != n {
			t.Errorf("table %s: %d rows after the upgrade (%v), %d before", table, got, err, n)
		}
	}
	// The data reads through today's code.
	u, err := db.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := db.Chains(ctx, u.ID, "g", "")
	if err != nil || len(cs) != 2 || cs[1].State != "failed" || !strings.Contains(cs[1].Error, "error mask 2") {
		t.Fatalf("chains after the upgrade: %+v %v", cs, err)
	}
	fresh, err := Open(ctx, filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if a, b := schemaOf(t, db.sql), schemaOf(t, fresh.sql); a != b {
		t.Fatalf("upgraded schema differs from a fresh one:\nupgraded:\n%s\nfresh:\n%s", a, b)
	}
	h, err := db.History(ctx)
	if err != nil || len(h) != SchemaVersion() || h[0].Name != "baseline" {
		t.Fatalf("history %+v %v", h, err)
	}
	// Opening again changes nothing.
	db2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
}

// TestNewerSchemaRefused: a database of a newer rboinc is refused, saying
// what to do, and left as it is.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.sql.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1))
	db.Close()
	_, err = Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d", SchemaVersion()+1)) || !strings.Contains(err.Error(), "upgrade rboinc") {
		t.Fatalf("a newer database: %v", err)
	}
}

// TestConcurrentOpensMigrateOnce: processes opening an old database at the
// same moment (CGI requests, the hook, the creator) all succeed, and each
// migration is applied exactly once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	ctx := context.Background()
	path, _ := loadFixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			db, err := Open(ctx, path)
			if err == nil {
				_, err = db.Chains(ctx, 1, "g", "")
				db.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := db.History(ctx)
	if err != nil || len(h) != SchemaVersion() {
		t.Fatalf("history after concurrent opens: %+v %v", h, err)
	}
}
