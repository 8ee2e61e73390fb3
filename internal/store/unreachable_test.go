package store

import (
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
