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

	"github.com/rboinc/rboinc/internal/mariadbtest"
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
		{&mysql.MySQLError{Number: 1040, Message: "Too many connections"}, true},
		{&mysql.MySQLError{Number: 1226, Message: "User 'u' has exceeded the 'max_user_connections' resource"}, true},
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

// A MariaDB out of connections (its max_connections are shared with
// BOINC's daemons and scheduler) answers a new one with an error that
// ends as others close: unreachable for now (503, retried), not an
// internal error. The number is the one a real server sends.
func TestTooManyConnectionsIsUnreachable(t *testing.T) {
	if !onMariaDB() {
		t.Skip("MariaDB's refusal (" + TestStateDBEnv + "=mariadb)")
	}
	ctx := context.Background()
	srv, err := mariadbtest.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	dsn, err := srv.NewDatabase(ctx, "conns")
	if err != nil {
		t.Fatal(err)
	}
	root, err := sql.Open("mysql", "root@unix("+srv.Socket+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := root.ExecContext(ctx, "SET GLOBAL max_connections = 3"); err != nil {
		t.Fatal(err)
	}
	user, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	var refused error
	for i := 0; i < 10 && refused == nil; i++ {
		c, err := user.Conn(ctx) // held until user.Close
		if err != nil {
			refused = err
			break
		}
		defer c.Close()
	}
	var me *mysql.MySQLError
	if !errors.As(refused, &me) || me.Number != 1040 {
		t.Fatalf("connections beyond max_connections: %v, want MariaDB's error 1040", refused)
	}
	if !Unreachable(refused) {
		t.Errorf("Unreachable(%v) = false, want true", refused)
	}
}
