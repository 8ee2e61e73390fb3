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
