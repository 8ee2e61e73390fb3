package store

import (
	"context"
	"fmt"
	"os"
)

// SchemaStatus is what a database's schema version means to this rboinc.
type SchemaStatus struct {
	Version     int  // the database's (0: made before schema versions, or empty)
	Known       int  // this rboinc's
	Unversioned bool // rboinc's tables without a version: the release before schema versions made it
}

// Current tells whether this rboinc uses the database as it is.
func (s SchemaStatus) Current() bool { return s.Version == s.Known }

// Behind tells whether opening the database will upgrade it.
func (s SchemaStatus) Behind() bool { return s.Version < s.Known }

// Inspect reads the schema version of the database at path without
// changing anything: no upgrade, no file created (doctor reports what
// opening it would do).
func Inspect(ctx context.Context, path string) (SchemaStatus, error) {
	st := SchemaStatus{Known: SchemaVersion()}
	if IsMySQL(path) {
		db, dia, err := openDialect(path)
		if err != nil {
			return st, err
		}
		defer db.Close()
		if st.Version, err = dia.version(ctx, db); err != nil {
			return st, fmt.Errorf("state database %s: %w", dia, err)
		}
		return st, nil
	}
	if _, err := os.Stat(path); err != nil {
		return st, fmt.Errorf("state database: %w", err)
	}
	db, err := openSQLiteReadOnly(path)
	if err != nil {
		return st, fmt.Errorf("state database %s: %w", path, err)
	}
	defer db.Close()
	if st.Version, err = userVersion(ctx, db); err != nil {
		return st, fmt.Errorf("state database %s: %w", path, err)
	}
	if st.Version == 0 {
		if st.Unversioned, err = sqliteHasTables(ctx, db); err != nil {
			return st, fmt.Errorf("state database %s: %w", path, err)
		}
	}
	return st, nil
}

// SchemaMismatchError refuses, to OpenCurrent, a database at another
// schema version than this build's.
type SchemaMismatchError struct {
	Location       string
	Version, Known int
}

func (e *SchemaMismatchError) Error() string {
	return fmt.Sprintf("state database %s is at schema version %d, this program's is %d: it opens only a state of its own version, to leave it as the rboinc that uses it made it (run the build of that rboinc)",
		Describe(e.Location), e.Version, e.Known)
}

// OpenCurrent opens the state database at location only if its schema is
// this build's: never upgrading it. A program that reads the state of
// an rboinc it did not ship with (a check beside a running server of
// another build) must not upgrade the schema under that server, which
// would then refuse its own database.
func OpenCurrent(ctx context.Context, location string) (*DB, error) {
	st, err := Inspect(ctx, location)
	if err != nil {
		return nil, err
	}
	if !st.Current() {
		return nil, &SchemaMismatchError{Location: location, Version: st.Version, Known: st.Known}
	}
	return Open(ctx, location)
}
