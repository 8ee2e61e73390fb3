package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestRetryLater: what the creator tries again (the pass fails, the steps
// stay pending) and what fails a chain (the step's own fault).
func TestRetryLater(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{inState(errors.New("state database: anything")), true},
		{fmt.Errorf("inserting: %w", &mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded; try restarting transaction"}), true},
		{fmt.Errorf("inserting: %w", &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}), true},
		{fmt.Errorf("inserting: %w", mysql.ErrInvalidConn), true},
		{errors.New("create_work failed (exit status 1): Database error: Lock wait timeout exceeded; try restarting transaction"), true},
		{errors.New("create_work failed (exit status 1): Database error: Deadlock found when trying to get lock; try restarting transaction"), true},
		{errors.New("create_work failed (exit status 1): Database error: MySQL server has gone away"), true},
		{errors.New("create_work failed (exit status 1): Duplicate entry 'x' for key 'name'"), false},
		{errors.New("create_work failed (exit status 1): can't open input file"), false},
		{fmt.Errorf("inserting: %w", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}), false},
		{nil, false},
	} {
		if got := retryLater(c.err); got != c.want {
			t.Errorf("retryLater(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
