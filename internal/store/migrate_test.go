package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
	raw := rawDB(t, path)
	defer raw.Close()
	// The previous release opened its database in WAL mode, always.
	if _, err := raw.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode = WAL").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q: %v", mode, err)
	}
	rows = map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^INSERT INTO (\w+)\(`).FindAllStringSubmatch(string(dump), -1) {
		rows[m[1]]++
	}
	return path, rows
}

// rawDB opens a database file with no migration.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	return raw
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
		if err := rs.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		text = strings.Join(strings.Fields(strings.Replace(text, "IF NOT EXISTS ", "", 1)), " ")
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, text)
	}
	return b.String()
}

// contentOf is every row of table, the given columns, in a stable order.
func contentOf(t *testing.T, db *sql.DB, table, cols string) []string {
	t.Helper()
	rs, err := db.Query(fmt.Sprintf("SELECT quote(%s) FROM %s ORDER BY 1", strings.ReplaceAll(cols, ",", ")||','||quote("), table))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// columnsOf names the columns of every table.
func columnsOf(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rs, err := db.Query(`SELECT m.name, group_concat(p.name) FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' GROUP BY m.name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]string{}
	for rs.Next() {
		var table, cols string
		rs.Scan(&table, &cols)
		out[table] = cols
	}
	return out
}

// TestUpgradeFromPreviousRelease: a database made by the release before
// schema versions opens, every row survives unchanged, and its schema ends
// equal to a fresh database's.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	ctx := context.Background()
	path, want := loadFixture(t)
	raw := rawDB(t, path)
	before := map[string][]string{}
	cols := columnsOf(t, raw)
	for table := range cols {
		before[table] = contentOf(t, raw, table, cols[table])
	}
	raw.Close()
	if len(want) < 8 {
		t.Fatalf("the fixture has rows of %d tables only: %v", len(want), want)
	}
	for table, n := range want {
		if len(before[table]) != n {
			t.Fatalf("table %s: %d rows loaded, the dump has %d", table, len(before[table]), n)
		}
	}
	if st, err := Inspect(ctx, path); err != nil || st.Version != 0 || !st.Unversioned || st.Current() {
		t.Fatalf("inspecting the previous release's database: %+v %v", st, err)
	}

	rep, err := Migrate(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Adopted || rep.From != 0 || rep.To != SchemaVersion() || len(rep.Applied) != SchemaVersion() {
		t.Fatalf("report %+v", rep)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Version(ctx); err != nil || v != SchemaVersion() {
		t.Fatalf("version %d %v, want %d", v, err, SchemaVersion())
	}
	for table, rows := range before {
		if got := contentOf(t, db.sql, table, cols[table]); strings.Join(got, "\n") != strings.Join(rows, "\n") {
			t.Errorf("table %s after the upgrade:\n%s\nbefore:\n%s", table, strings.Join(got, "\n"), strings.Join(rows, "\n"))
		}
	}
	// The data reads through today's code.
	u, err := db.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	// Version 7: nobody was an administrator before the right existed.
	if u.Admin {
		t.Fatal("a user of the previous release is an administrator after the upgrade")
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
	if err != nil || len(h) != SchemaVersion() || !strings.Contains(h[0].Name, "adopted") || h[0].By == "" || h[0].Applied == 0 {
		t.Fatalf("history %+v %v", h, err)
	}
	// Opening again changes nothing.
	if rep, err := Migrate(ctx, path); err != nil || len(rep.Applied) != 0 || rep.From != SchemaVersion() {
		t.Fatalf("migrating again: %+v %v", rep, err)
	}
	if st, err := Inspect(ctx, path); err != nil || !st.Current() {
		t.Fatalf("inspecting the upgraded database: %+v %v", st, err)
	}
}

// TestFreshDatabase: a new database gets every migration, not adopted.
func TestFreshDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	if _, err := Inspect(ctx, path); err == nil {
		t.Fatal("inspecting a missing database: no error")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Inspect made %s: %v", path, err)
	}
	rep, err := Migrate(ctx, path)
	if err != nil || rep.Adopted || rep.From != 0 || len(rep.Applied) != SchemaVersion() || rep.Applied[0].Name != "baseline" {
		t.Fatalf("report %+v %v", rep, err)
	}
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
	newer := SchemaVersion() + 1
	if _, err := db.sql.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(ctx, path)
	var tooNew *SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Version != newer || tooNew.Known != SchemaVersion() {
		t.Fatalf("a newer database: %v", err)
	}
	if want := fmt.Sprintf("state.db is at schema version %d, this rboinc knows up to %d: upgrade rboinc", newer, SchemaVersion()); !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	if _, err := Migrate(ctx, path); !errors.As(err, &tooNew) {
		t.Fatalf("migrating a newer database: %v", err)
	}
	if st, err := Inspect(ctx, path); err != nil || st.Version != newer || st.Behind() || st.Current() {
		t.Fatalf("inspecting a newer database: %+v %v", st, err)
	}
}

// TestFailedMigrationChangesNothing: when a migration fails, the ones
// before it in the same upgrade are undone too, and the error names it.
func TestFailedMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	path, _ := loadFixture(t)
	raw := rawDB(t, path)
	schema := schemaOf(t, raw)
	raw.Close()
	list := append(migrations[:len(migrations):len(migrations)],
		migration{version: SchemaVersion() + 1, name: "a broken one", sql: `ALTER TABLE nosuch ADD COLUMN x TEXT`})
	if _, _, err := openWith(ctx, path, list); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d (a broken one)", SchemaVersion()+1)) {
		t.Fatalf("a failing migration: %v", err)
	}
	raw = rawDB(t, path)
	defer raw.Close()
	if got := schemaOf(t, raw); got != schema {
		t.Fatalf("the schema changed:\n%s\nwas:\n%s", got, schema)
	}
	if v, _ := userVersion(ctx, raw); v != 0 {
		t.Fatalf("user_version %d after a failed upgrade", v)
	}
}

// TestAdoptionRefusesOtherTables: a database without a version whose
// tables are not the previous release's is refused, not half adopted.
func TestAdoptionRefusesOtherTables(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	raw := rawDB(t, path)
	if _, err := raw.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err := Open(ctx, path)
	if !errors.Is(err, errNotRboinc) || !strings.Contains(err.Error(), "table users") {
		t.Fatalf("a foreign database: %v", err)
	}
	raw = rawDB(t, path)
	defer raw.Close()
	if got := schemaOf(t, raw); got != "table users: CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT)\n" {
		t.Fatalf("the refused database changed:\n%s", got)
	}
}

// TestGoMigration: a migration may be Go code on the transaction, and runs
// once however many open the database at the same moment.
func TestGoMigration(t *testing.T) {
	ctx := context.Background()
	path, _ := loadFixture(t)
	list := append(migrations[:len(migrations):len(migrations)], migration{
		version: SchemaVersion() + 1, name: "count the runs",
		sql: `CREATE TABLE IF NOT EXISTS runs (n INTEGER)`,
		fn: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO runs VALUES (1)`)
			return err
		},
	})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			db, _, err := openWith(ctx, path, list)
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db, _, err := openWith(ctx, path, list)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.sql.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the Go migration ran %d times (%v)", n, err)
	}
}

// TestMigrationsNumbered: versions run 1, 2, 3... and each does something.
func TestMigrationsNumbered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.name == "" || (m.sql == "" && m.fn == nil) {
			t.Errorf("migration #%d: version %d, name %q: want version %d, a name, and SQL or a function", i, m.version, m.name, i+1)
		}
	}
}

// TestReleasedMigrationsUnchanged holds released migrations to their
// digests: a database upgraded by a release must equal one made fresh by
// every later release.
func TestReleasedMigrationsUnchanged(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "migrations-released.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		v, _ := strconv.Atoi(f[0])
		if v < 1 || v > len(migrations) {
			t.Errorf("released migration %d is gone: never remove one", v)
			continue
		}
		if got := fmt.Sprintf("%x", sha256.Sum256([]byte(migrations[v-1].sql))); got != f[1] {
			t.Errorf("released migration %d (%s) was edited: restore it and append a new migration instead", v, migrations[v-1].name)
		}
	}
}
