package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/sqldb"
)

// The store's queries are written once, in SQLite's words (placeholders
// are ?, which both drivers take). Everything that differs between the
// engines lives in the dialect: SQLite's here, MariaDB's in
// dialect_mysql.go (its DDL, the rewriting of queries, the schema version
// and the write lock). No other file of the package names an engine.

// dialect is what the store asks of an engine.
type dialect interface {
	// begin starts a write transaction holding the database's write lock,
	// so that writers run one after another on both engines (the
	// guarantees of the store, quotas above all, rest on that); release
	// is called once the transaction has ended.
	begin(ctx context.Context, db *sql.DB) (tx *sql.Tx, release func(), err error)
	// ownRow runs fn, a write of one row only its process writes (its
	// process lease), as soon as that row is free: on MariaDB outside
	// the write lock, so that a writer holding it long (a purge) cannot
	// keep every lease from being renewed until they all run out.
	ownRow(ctx context.Context, d *DB, fn func(execer) error) error
	// migrate brings the schema to the last version of list.
	migrate(ctx context.Context, d *DB, list []migration) (MigrationReport, error)
	// version reads the schema version (0: empty database).
	version(ctx context.Context, q rowQuerier) (int, error)
	// sync makes the committed transactions durable.
	sync() error
	// String names the database for messages (no password).
	String() string
}

// openDialect opens location: a path of an SQLite file, or
// mysql://USER:PASS@tcp(HOST:PORT)/DB (or unix(SOCKET)) for MariaDB or
// MySQL, whose tables are then named rboinc_*.
func openDialect(location string) (*sql.DB, dialect, error) {
	if !strings.Contains(location, "://") {
		return openSQLite(location)
	}
	t, err := sqldb.ParseURL(location)
	if err != nil {
		return nil, nil, fmt.Errorf("state database: %w", err)
	}
	if t.Engine == sqldb.SQLite {
		return openSQLite(t.DSN)
	}
	return openMySQL(t)
}

// Describe names a state database's location for messages: a MariaDB
// address without its password, or the SQLite file's path.
func Describe(location string) string {
	if t, err := sqldb.ParseURL(location); err == nil && t.Engine == sqldb.MySQL {
		return t.String()
	}
	return location
}

// IsMySQL tells whether location names a MariaDB or MySQL database
// (mysql://...) rather than an SQLite file.
func IsMySQL(location string) bool { return strings.HasPrefix(location, "mysql://") }

// sqliteDialect is the embedded default: one file, WAL, one writer at a
// time (every transaction is BEGIN IMMEDIATE: _txlock in the DSN).
type sqliteDialect struct{ path string }

func openSQLite(path string) (*sql.DB, dialect, error) {
	if err := createPrivate(path); err != nil {
		return nil, nil, fmt.Errorf("creating state database %s: %w", path, err)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(" + strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10) + ")&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=temp_store(memory)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("opening state database %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	return db, sqliteDialect{path: path}, nil
}

// openSQLiteReadOnly opens the file at path to read, creating nothing
// (doctor's look at the schema version).
func openSQLiteReadOnly(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(20000)")
}

func (s sqliteDialect) String() string { return s.path }

// begin waits for the writer's turn (see writeturns.go) before SQLite's
// BEGIN IMMEDIATE.
func (s sqliteDialect) begin(ctx context.Context, db *sql.DB) (*sql.Tx, func(), error) {
	release, err := takeWriteTurn(ctx, s.path)
	if err != nil {
		return nil, nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		release()
		return nil, nil, err
	}
	return tx, release, nil
}

// ownRow: SQLite has one writer of the file, the row's too.
func (sqliteDialect) ownRow(ctx context.Context, d *DB, fn func(execer) error) error {
	return d.Tx(ctx, func(tx *sql.Tx) error { return fn(tx) })
}

func (sqliteDialect) migrate(ctx context.Context, d *DB, list []migration) (MigrationReport, error) {
	return d.migrateSQLite(ctx, list)
}

func (sqliteDialect) version(ctx context.Context, q rowQuerier) (int, error) {
	return userVersion(ctx, q)
}

func userVersion(ctx context.Context, q rowQuerier) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// setUserVersion is SQLite's end of a migration.
func setUserVersion(ctx context.Context, tx *sql.Tx, v int) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

// sqliteHasTables tells whether an SQLite database has rboinc's tables.
func sqliteHasTables(ctx context.Context, q rowQuerier) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'users'`).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// sync: commits are not synced one by one (WAL with synchronous=NORMAL: a
// power cut may take the last of them back, a crash of the process does
// not). The committed transactions are in the WAL file, or in the database
// file after a checkpoint, which SQLite syncs itself.
func (s sqliteDialect) sync() error {
	f, err := os.Open(s.path + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("state database: syncing its log: %w", err)
	}
	return nil
}

// isUnique tells a unique key's refusal, on either engine.
func isUnique(err error) bool {
	return err != nil && (sqldb.IsDuplicate(err) || strings.Contains(err.Error(), "UNIQUE constraint failed"))
}
