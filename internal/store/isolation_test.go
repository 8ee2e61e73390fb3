package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// A state transaction reads what other connections committed after it
// began (READ COMMITTED, as SQLite's immediate transaction sees the
// database as it is): on every connection, those made again after the
// pool dropped the old ones (or MariaDB restarted) included, since the level is
// each connection's session's, not set per transaction.
func TestTransactionsReadCommitted(t *testing.T) {
	if !onMariaDB() {
		t.Skip("the isolation level is MariaDB's (" + TestStateDBEnv + "=mariadb)")
	}
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.AddUser(ctx, "alice", "h0"); err != nil {
		t.Fatal(err)
	}
	round := func(n int) {
		t.Helper()
		before, after := fmt.Sprintf("h%d", n-1), fmt.Sprintf("h%d", n)
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			var h string
			if err := tx.QueryRowContext(ctx, `SELECT token_hash FROM users WHERE name = 'alice'`).Scan(&h); err != nil {
				return err
			}
			if h != before {
				return fmt.Errorf("token %q before, want %q", h, before)
			}
			// Another connection commits a change meanwhile.
			if _, err := db.SQL().ExecContext(ctx, `UPDATE users SET token_hash = ? WHERE name = 'alice'`, after); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT token_hash FROM users WHERE name = 'alice'`).Scan(&h); err != nil {
				return err
			}
			if h != after {
				return fmt.Errorf("round %d: the transaction read %q after another connection committed %q: not READ COMMITTED", n, h, after)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	round(1)
	// The pool keeps no connection: each transaction after runs on a new
	// one, as after MariaDB's restart.
	db.SQL().SetMaxIdleConns(0)
	for n := 2; n <= 4; n++ {
		round(n)
	}
}
