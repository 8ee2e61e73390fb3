package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestUnreachable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("state database: %w", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}), true},
		{fmt.Errorf("x: %w", driver.ErrBadConn), true},
		{mysql.ErrInvalidConn, true},
		{&mysql.MySQLError{Number: 1053, Message: "Server shutdown in progress"}, true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{ErrNotFound, false},
		{errors.New("disk full"), false},
		{nil, false},
	} {
		if got := Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A commit whose connection breaks says the change may have been recorded
// (ErrCommitUnknown), not merely that the database is out of reach: the
// server then answers outcome_unknown, and the clients send again only
// what is safe to repeat (an -extend sent twice added its steps twice in
// the soak, MariaDB killed during its commit).
func TestCommitOnBrokenConnectionIsUnknown(t *testing.T) {
	if !onMariaDB() {
		t.Skip("a commit's connection breaks only on MariaDB (" + TestStateDBEnv + "=mariadb)")
	}
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.AddUser(ctx, "alice", "h1"); err != nil {
		t.Fatal(err)
	}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET token_hash = 'h2' WHERE name = 'alice'`); err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT CONNECTION_ID()`).Scan(&id); err != nil {
			return err
		}
		// Another connection ends this one between the work and its commit.
		_, err := db.SQL().ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id))
		return err
	})
	if !errors.Is(err, ErrCommitUnknown) || !Unreachable(err) {
		t.Fatalf("a commit on a killed connection: %v, want ErrCommitUnknown (and unreachable)", err)
	}
}
