package store

import (
	"context"
	"testing"
)

// Arguments reach the database as they are, whatever they hold: on
// MariaDB the driver writes them into the query's text (escaped), so
// quotes, backslashes, a NUL, a question mark and comment marks must come
// back unchanged, and a question mark inside the query's own literal is
// not taken for a placeholder.
func TestQueryArgsVerbatim(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for i, v := range []string{`it's`, `back\slash\`, "nul\x00byte", `q?mark`, `-- not a comment`, `/* nor */ this`, `'; DROP TABLE users; --`, "é ü 漢", `\'`, `"`} {
		if _, err := db.sql.ExecContext(ctx, `INSERT INTO counters(name, n) VALUES (?, ?)`, v, i); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		var lit, got string
		var n int
		if err := db.sql.QueryRowContext(ctx, `SELECT '?', name, n FROM counters WHERE name = ?`, v).Scan(&lit, &got, &n); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if lit != "?" || got != v || n != i {
			t.Fatalf("stored %q (%d), read back %q, %q (%d)", v, i, lit, got, n)
		}
	}
	var users int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&users); err != nil {
		t.Fatal(err)
	}
}
