package store

import (
	"context"
	"database/sql/driver"
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

// On MariaDB, arguments come back unchanged also on a session whose
// sql_mode has NO_BACKSLASH_ESCAPES and ANSI_QUOTES (as a server's global
// mode may for BOINC's database, whose connections do not set their
// own): the driver escapes for the mode the server reports.
func TestQueryArgsVerbatimOtherModes(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, ok := db.dialect.(mysqlDialect); !ok {
		t.Skip("MariaDB's sql_mode")
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The session's mode is not the pool's: the connection is discarded.
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn })
	if _, err := conn.ExecContext(ctx, `SET SESSION sql_mode = 'STRICT_TRANS_TABLES,PIPES_AS_CONCAT,NO_BACKSLASH_ESCAPES,ANSI_QUOTES'`); err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{`it's`, `back\slash\`, "nul\x00byte", `q?mark`, `'; DROP TABLE users; --`, `\'`, `"`, `\\'' OR 1=1 --`, "é ü 漢"} {
		if _, err := conn.ExecContext(ctx, `INSERT INTO counters(name, n) VALUES (?, ?)`, v, i); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		var got string
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT name, n FROM counters WHERE name = ?`, v).Scan(&got, &n); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if got != v || n != i {
			t.Fatalf("stored %q (%d), read back %q (%d)", v, i, got, n)
		}
	}
	var users int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&users); err != nil {
		t.Fatal(err)
	}
}
