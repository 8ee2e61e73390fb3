package sqldb

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsDuplicate reports whether err is a unique key's refusal.
func IsDuplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// IsTooLong reports whether err is MySQL's strict-mode refusal of an
// over-long value (SQLite never refuses one).
func IsTooLong(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1406
}

// IsTransient reports whether err is MariaDB's "try again": a lock wait
// timeout (1205) or a deadlock (1213), which end the statement (or the
// transaction), not the data's trouble.
func IsTransient(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1205 || me.Number == 1213)
}
