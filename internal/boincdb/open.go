package boincdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/rboinc/rboinc/internal/sqldb"
)

// The most connections one process opens to BOINC's database, by
// engine (see Open).
const (
	mysqlMaxOpen  = 16
	sqliteMaxOpen = 8
)

// DB is an open BOINC database.
type DB struct {
	*sql.DB
	Engine sqldb.Engine
	Target sqldb.Target
}

// Open connects to t and makes sure the server answers. Nothing is
// created: CreateTables does that for the stand-in, a real project has
// its tables from make_project.
func Open(ctx context.Context, t sqldb.Target) (*DB, error) {
	var (
		db  *sql.DB
		err error
	)
	switch t.Engine {
	case sqldb.SQLite:
		// Several processes (create_work runs, daemons) share the file:
		// every write transaction takes the write lock up front and waits.
		db, err = sql.Open("sqlite", t.DSN+"?_busy_timeout=10000&_journal_mode=WAL&_txlock=immediate")
		if err == nil {
			// Readers share the file, writers take turns on its lock:
			// more connections than this add waiting, descriptors and
			// page caches, not speed.
			db.SetMaxOpenConns(sqliteMaxOpen)
		}
	case sqldb.MySQL:
		var cfg *mysql.Config
		if cfg, err = mysql.ParseDSN(t.DSN); err != nil {
			return nil, fmt.Errorf("BOINC database %s: %w", t, err)
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = 10 * time.Second
		}
		cfg.ClientFoundRows = true // as BOINC connects: affected rows are matched rows
		// Arguments written into the query's text by the driver, as
		// BOINC's daemons send theirs (mysql_query): one round trip, not
		// a prepare, an execute and a close.
		cfg.InterpolateParams = true
		conn, cerr := mysql.NewConnector(cfg)
		if err = cerr; err == nil {
			db = sql.OpenDB(conn)
			db.SetConnMaxIdleTime(time.Minute)
			// database/sql keeps 2 by default: the stand-in's slots and
			// the native assimilator's overlapped batches then opened and
			// closed a connection 4 times a second in the long soak (a
			// BOINC daemon keeps its one connection).
			db.SetMaxIdleConns(8)
			// Bounded: a burst of requests must not take MariaDB's
			// max_connections (151 by default) from BOINC's daemons,
			// which keep one connection each.
			db.SetMaxOpenConns(mysqlMaxOpen)
			// Renewed now and then, well within wait_timeout (8 hours).
			db.SetConnMaxLifetime(time.Hour)
		}
	default:
		err = fmt.Errorf("unknown database engine %q", t.Engine)
	}
	if err != nil {
		return nil, fmt.Errorf("opening BOINC database %s: %w", t, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot reach BOINC database %s: %w", t, err)
	}
	return &DB{DB: db, Engine: t.Engine, Target: t}, nil
}

// Tx runs fn in one transaction and commits it. A transaction the server
// gave up on (a deadlock, a lock wait that timed out, SQLite busy) is run
// again from the start, a few times: fn must be safe to repeat.
func (d *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = d.tx(ctx, fn)
		if err == nil || !retryable(err) || attempt >= 5 || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(10*(attempt+1)) * time.Millisecond)
	}
}

func (d *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// retryable reports whether err is the server's "try again".
func retryable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205 // deadlock, lock wait timeout
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_BUSY
	}
	return false
}

// inList is "(?,?,...)" for n values; n must be > 0.
func inList(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// anys converts ids to query arguments.
func anys[T any](ids []T) []any {
	out := make([]any, len(ids))
	for i, v := range ids {
		out[i] = v
	}
	return out
}
