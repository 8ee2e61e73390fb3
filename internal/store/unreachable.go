package store

import (
	"database/sql/driver"
	"errors"
	"net"

	"github.com/go-sql-driver/mysql"
)

// ErrCommitUnknown says the connection to the state database broke during
// a commit: the server may have recorded the change before it went away,
// or not, and no one can tell from here. A request that is safe to repeat
// may be sent again; one that is not (an -extend adds steps again) must
// look at the state first.
var ErrCommitUnknown = errors.New("the state database went away during the commit; the change may have been recorded")

// Unreachable tells whether err says the state database (MariaDB) cannot
// be reached at the moment: refused or broken connections, a server
// shutting down or restarting, or out of connections. A request that failed so may be sent again
// as it is (every request is safe to repeat; a submission sent again is
// answered with the chains it made): the server answers it 503 with
// Retry-After, which clients retry, instead of an internal error.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true // dial, read or write on the connection
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1053, // server shutdown in progress
			1927,                   // connection was killed
			2002, 2003, 2006, 2013, // cannot connect, server gone away, lost connection
			// Too many connections: the server's (max_connections, 151
			// by default, shared with BOINC's daemons and scheduler), or
			// the account's: each ends as connections close.
			1040, 1203, 1226:
			return true
		}
	}
	return false
}
