package engine

import (
	"errors"
	"strings"

	"github.com/rboinc/rboinc/internal/sqldb"
	"github.com/rboinc/rboinc/internal/store"
)

// stateError is a failure of the state database met while creating steps'
// work units (reading their catch-up, recording them queued): the
// database's trouble, never the steps'. The creator's pass fails and is
// tried again; no chain fails for it.
type stateError struct{ err error }

func (e *stateError) Error() string { return e.err.Error() }
func (e *stateError) Unwrap() error { return e.err }

// inState marks err (nil stays nil) as the state database's.
func inState(err error) error {
	if err == nil {
		return nil
	}
	return &stateError{err}
}

// transientDBMessages are MariaDB's words for "try again" as create_work
// prints them ("Database error: ..."): BOINC's program reports them as
// text, without the error's number.
var transientDBMessages = []string{
	"Lock wait timeout exceeded",
	"Deadlock found when trying to get lock",
	"MySQL server has gone away",
	"Lost connection to MySQL server",
	"Lost connection to server",
	"Server has gone away",
}

// retryLater tells whether creating steps failed for a reason that is
// not theirs and passes: the state database's failure, a lock wait
// timeout (1205) or a deadlock (1213) in either database, a connection
// lost or refused. The steps stay pending and the next pass creates them;
// failing their chains would end a user's work for a moment's contention
// (seen in the soak, 2026-12-06: a chain failed on "state database:
// taking the write lock: Error 1205").
func retryLater(err error) bool {
	if err == nil {
		return false
	}
	var se *stateError
	if errors.As(err, &se) || store.Unreachable(err) {
		return true
	}
	if sqldb.IsTransient(err) {
		return true
	}
	msg := err.Error()
	for _, m := range transientDBMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
