package store

import (
	"context"
	"database/sql"
	"fmt"
	"runtime/debug"
	"time"
)

// migration is one step of the schema's history.
type migration struct {
	version int
	name    string
	sql     string
}

// SchemaVersion is the schema version this build of rboinc makes and
// reads.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// historySQL records when each migration ran, and by which rboinc.
const historySQL = `CREATE TABLE IF NOT EXISTS schema_history (
	version INTEGER PRIMARY KEY,
	name    TEXT NOT NULL,
	applied INTEGER NOT NULL,
	rboinc  TEXT NOT NULL
);`

// migrate brings the database to SchemaVersion. The version is SQLite's
// user_version: one read when there is nothing to do (every CGI request
// and hook opens the database). Otherwise the migrations run in one
// immediate transaction: of several processes opening an old database at
// once, one applies them and the others, waiting on the write lock, find
// the work done. A database newer than this build is refused, not used.
func (d *DB) migrate(ctx context.Context) error {
	v, err := userVersion(ctx, d.sql)
	if err != nil {
		return err
	}
	if v == SchemaVersion() {
		return nil
	}
	if v > SchemaVersion() {
		return tooNew(v)
	}
	return d.Tx(ctx, func(tx *sql.Tx) error {
		v, err := userVersion(ctx, tx)
		if err != nil {
			return err
		}
		if v > SchemaVersion() {
			return tooNew(v)
		}
		if _, err := tx.ExecContext(ctx, historySQL); err != nil {
			return fmt.Errorf("recording schema history: %w", err)
		}
		for _, m := range migrations {
			if m.version <= v {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("upgrading the schema to version %d (%s): %w", m.version, m.name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_history(version, name, applied, rboinc) VALUES (?, ?, ?, ?)`,
				m.version, m.name, time.Now().Unix(), buildVersion()); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()))
		return err
	})
}

func tooNew(v int) error {
	return fmt.Errorf("the database is at schema version %d and this rboinc knows versions up to %d: upgrade rboinc (an older rboinc must not write a newer schema)", v, SchemaVersion())
}

func userVersion(ctx context.Context, q rowQuerier) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// Version tells the schema version of the open database.
func (d *DB) Version(ctx context.Context) (int, error) { return userVersion(ctx, d.sql) }

// History lists the migrations applied, oldest first: version, name, when
// (Unix seconds) and by which rboinc.
func (d *DB) History(ctx context.Context) ([]MigrationRecord, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT version, name, applied, rboinc FROM schema_history ORDER BY version`)
	if err != nil {
		return nil, err
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

// MigrationRecord is one applied migration.
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
