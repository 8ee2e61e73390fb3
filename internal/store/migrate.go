package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"time"
)

// migration is one step of the schema's history: SQL, or a Go function
// for what SQL alone cannot do (both may be given: the SQL runs first).
type migration struct {
	version int
	name    string
	sql     string
	fn      func(ctx context.Context, tx *sql.Tx) error
}

// SchemaVersion is the schema version this build of rboinc makes and
// reads.
func SchemaVersion() int { return latest(migrations) }

func latest(list []migration) int { return list[len(list)-1].version }

// historySQL records when each migration ran, and by which rboinc.
const historySQL = `CREATE TABLE IF NOT EXISTS schema_history (
	version INTEGER PRIMARY KEY,
	name    TEXT NOT NULL,
	applied INTEGER NOT NULL,
	rboinc  TEXT NOT NULL
);`

// SchemaTooNewError refuses a database a newer rboinc has upgraded: this
// build would misread it, or undo what the newer one relies on.
type SchemaTooNewError struct {
	File           string
	Version, Known int
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("%s is at schema version %d, this rboinc knows up to %d: upgrade rboinc", e.File, e.Version, e.Known)
}

// MigrationReport says what opening the database changed.
type MigrationReport struct {
	From, To int  // schema versions before and after (From 0: new, or made before schema versions)
	Adopted  bool // a database of the release before schema versions, taken as version 1 unchanged
	Applied  []MigrationRecord
}

// migrate brings the database to the last version of list. The version is
// SQLite's user_version: one read when there is nothing to do (every CGI
// request and hook opens the database). Otherwise all the migrations due
// run in one immediate transaction, so the database is either as the old
// release left it or fully upgraded; of several processes opening an old
// database at once, one applies them and the others, waiting on the write
// lock, re-read the version and find the work done.
func (d *DB) migrateSQLite(ctx context.Context, list []migration) (MigrationReport, error) {
	known := latest(list)
	rep := MigrationReport{To: known}
	v, err := userVersion(ctx, d.sql)
	if err != nil {
		return rep, err
	}
	rep.From = v
	if v == known {
		return rep, nil
	}
	if v > known {
		return rep, d.tooNew(v, known)
	}
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		v, err := userVersion(ctx, tx)
		if err != nil {
			return err
		}
		rep.From = v
		if v > known {
			return d.tooNew(v, known)
		}
		if v == 0 {
			if rep.Adopted, err = unversioned(ctx, tx); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, historySQL); err != nil {
			return fmt.Errorf("recording schema history: %w", err)
		}
		for _, m := range list {
			if m.version <= v {
				continue
			}
			if err := apply(ctx, tx, m); err != nil {
				return fmt.Errorf("upgrading the schema to version %d (%s): %w", m.version, m.name, err)
			}
			name := m.name
			if m.version == 1 && rep.Adopted {
				if err := checkAdopted(ctx, tx); err != nil {
					return err
				}
				name += " (adopted: made by the release before schema versions)"
			}
			r := MigrationRecord{Version: m.version, Name: name, Applied: time.Now().Unix(), By: buildVersion()}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_history(version, name, applied, rboinc) VALUES (?, ?, ?, ?)`,
				r.Version, r.Name, r.Applied, r.By); err != nil {
				return fmt.Errorf("recording schema version %d: %w", m.version, err)
			}
			rep.Applied = append(rep.Applied, r)
		}
		if err := setUserVersion(ctx, tx, known); err != nil {
			return fmt.Errorf("setting the schema version: %w", err)
		}
		return nil
	})
	if err != nil {
		return MigrationReport{From: rep.From, To: rep.From}, err
	}
	if len(rep.Applied) > 0 && (rep.From > 0 || rep.Adopted) {
		slog.Info("state database upgraded", "database", d.String(), "from", rep.From, "to", rep.To, "adopted", rep.Adopted)
	}
	return rep, nil
}

func apply(ctx context.Context, tx *sql.Tx, m migration) error {
	if m.sql != "" {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return err
		}
	}
	if m.fn != nil {
		return m.fn(ctx, tx)
	}
	return nil
}

// unversioned tells whether a database without a schema version has
// rboinc's tables: one the release before schema versions made.
func unversioned(ctx context.Context, tx *sql.Tx) (bool, error) {
	ok, err := sqliteHasTables(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("looking for the tables of an earlier release: %w", err)
	}
	return ok, nil
}

func (d *DB) tooNew(v, known int) error {
	name := d.String()
	if s, ok := d.dialect.(sqliteDialect); ok {
		name = filepath.Base(s.path)
	}
	return &SchemaTooNewError{File: name, Version: v, Known: known}
}

// Version tells the schema version of the open database.
func (d *DB) Version(ctx context.Context) (int, error) { return d.dialect.version(ctx, d.sql) }

// History lists the migrations applied, oldest first.
func (d *DB) History(ctx context.Context) ([]MigrationRecord, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT version, name, applied, rboinc FROM schema_history ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("reading the schema history: %w", err)
	}
	defer rows.Close()
	var out []MigrationRecord
	for rows.Next() {
		var r MigrationRecord
		if err := rows.Scan(&r.Version, &r.Name, &r.Applied, &r.By); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// MigrationRecord is one applied migration: when (Unix seconds), and by
// which rboinc.
type MigrationRecord struct {
	Version int
	Name    string
	Applied int64
	By      string
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return bi.Main.Version + " " + s.Value[:12]
			}
		}
		return bi.Main.Version
	}
	return "unknown"
}

// errNotRboinc is wrapped by the refusal of an unversioned database whose
// tables are not the previous release's.
var errNotRboinc = errors.New("not a database of rboinc's previous release")
