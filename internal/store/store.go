package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is returned when a unique name is already taken.
var ErrExists = errors.New("already exists")

// ErrQuota is returned when a per-user limit would be passed.
var ErrQuota = errors.New("quota exceeded")

// DB is the state database.
type DB struct {
	sql     *sql.DB
	dialect dialect
	stmts   sync.Map // query text -> *sql.Stmt, see prepared
	lease   processLease
	leaseMu sync.Mutex
	commits atomic.Int64 // write transactions committed, see Commits
}

// Commits counts the transactions this handle committed (Tx and Batch):
// what a piece of work costs in write transactions, for tests and
// measurements.
func (d *DB) Commits() int64 { return d.commits.Load() }

// schemaV1 is the schema of the release before schema versions: the
// baseline migration. Never edit it; append a migration instead.
const schemaV1 = `
CREATE TABLE IF NOT EXISTS users (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
	token_hash TEXT NOT NULL UNIQUE,
	disabled   INTEGER NOT NULL DEFAULT 0,
	created    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chains (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users(id),
	grp        TEXT NOT NULL,
	name       TEXT NOT NULL,
	queue      TEXT NOT NULL,
	app        TEXT NOT NULL,
	tag        TEXT NOT NULL,
	nsteps     INTEGER NOT NULL,
	priority   INTEGER NOT NULL,
	params     TEXT NOT NULL,        -- JSON boinc.WorkParams
	wu_tmpl    TEXT NOT NULL,        -- create_work WU template, relative to the project
	res_tmpl   TEXT NOT NULL,        -- create_work result template, relative to the project
	layout     TEXT NOT NULL,        -- JSON: the queue's inputs and outputs at submission
	state      TEXT NOT NULL,        -- running, done, failed, stopped, purged
	steps_done INTEGER NOT NULL DEFAULT 0,
	error      TEXT NOT NULL DEFAULT '',
	created    INTEGER NOT NULL,
	updated    INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS chains_live ON chains(user_id, grp, name) WHERE state != 'purged';
CREATE INDEX IF NOT EXISTS chains_group ON chains(user_id, grp);
CREATE INDEX IF NOT EXISTS chains_name ON chains(user_id, grp, name); -- a name's tags, purged chains included
CREATE TABLE IF NOT EXISTS chain_inputs (   -- each input slot's content for step 0 and unchained slots
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	pos      INTEGER NOT NULL,
	md5      TEXT NOT NULL,
	PRIMARY KEY (chain_id, pos)
);
CREATE INDEX IF NOT EXISTS chain_inputs_md5 ON chain_inputs(md5);
CREATE TABLE IF NOT EXISTS steps (
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	step     INTEGER NOT NULL,
	wu_name  TEXT NOT NULL UNIQUE,
	state    TEXT NOT NULL,           -- creating, pending, queued, done, failed
	created  INTEGER NOT NULL,
	finished INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (chain_id, step)
);
CREATE INDEX IF NOT EXISTS steps_pending ON steps(state) WHERE state = 'pending'; -- the batch creator's queue
CREATE TABLE IF NOT EXISTS step_inputs (    -- what each step reads, by input position
	wu_name TEXT NOT NULL,
	pos     INTEGER NOT NULL,
	md5     TEXT NOT NULL,
	PRIMARY KEY (wu_name, pos)
);
CREATE INDEX IF NOT EXISTS step_inputs_md5 ON step_inputs(md5);
CREATE TABLE IF NOT EXISTS results (
	id       INTEGER PRIMARY KEY,
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	step     INTEGER NOT NULL,
	idx      INTEGER NOT NULL,
	file     TEXT NOT NULL,           -- <wu>_<idx>, the name in the results area
	md5      TEXT NOT NULL,
	size     INTEGER NOT NULL,
	acked    INTEGER NOT NULL DEFAULT 0,
	UNIQUE (chain_id, step, idx)
);
CREATE INDEX IF NOT EXISTS results_pending ON results(chain_id) WHERE acked = 0;
CREATE INDEX IF NOT EXISTS results_file ON results(file); -- one file's download and acknowledgement
CREATE TABLE IF NOT EXISTS pool (
	md5     TEXT PRIMARY KEY,
	size    INTEGER NOT NULL,
	touched INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS uploads (
	id      TEXT PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id),
	created INTEGER NOT NULL
);
`

// Open opens (creating if needed) the state database at location, bringing
// its schema up to this rboinc's version first (see migrate). location is
// the path of an SQLite file, or mysql://USER:PASS@tcp(HOST:PORT)/DB (or
// unix(SOCKET)) for rboinc_* tables in MariaDB.
func Open(ctx context.Context, location string) (*DB, error) {
	d, _, err := openWith(ctx, location, migrations)
	return d, err
}

// Migrate opens the database at location only to bring its schema up to
// date, and says what it did.
func Migrate(ctx context.Context, location string) (MigrationReport, error) {
	d, rep, err := openWith(ctx, location, migrations)
	if err != nil {
		return rep, err
	}
	return rep, d.Close()
}

func openWith(ctx context.Context, location string, list []migration) (*DB, MigrationReport, error) {
	db, dia, err := openDialect(location)
	if err != nil {
		return nil, MigrationReport{}, err
	}
	d := &DB{sql: db, dialect: dia}
	rep, err := d.dialect.migrate(ctx, d, list)
	if err != nil {
		db.Close()
		return nil, rep, fmt.Errorf("state database %s: %w", dia, err)
	}
	return d, rep, nil
}

// Sync makes every transaction committed so far durable. On SQLite commits
// are not synced one by one; a caller about to let the only other copy of
// what it recorded go (BOINC's outputs, a spool entry, create_work's
// insertion) calls Sync first, once for all of them.
func (d *DB) Sync() error { return d.dialect.sync() }

// String names the database for messages (without a password).
func (d *DB) String() string { return d.dialect.String() }

// Close closes the database.
func (d *DB) Close() error {
	d.endLease()
	d.stmts.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	return d.sql.Close()
}

// Tx runs fn in one immediate (write-locking) transaction. Within a Batch
// (ctx from it) fn runs in the batch's transaction instead, under a
// savepoint: its changes go if it fails, and are committed with the
// batch's.
func (d *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if b, ok := ctx.Value(batchKey{}).(*batch); ok && b.db == d {
		return b.savepoint(ctx, fn)
	}
	tx, release, err := d.dialect.begin(ctx, d.sql)
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	defer release() // after the commit or rollback below
	defer holdWatch()()
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		if Unreachable(err) {
			return fmt.Errorf("state database commit: %w: %w", ErrCommitUnknown, err)
		}
		return fmt.Errorf("state database commit: %w", err)
	}
	d.commits.Add(1)
	return nil
}

// SQL exposes the handle for read-only queries.
func (d *DB) SQL() *sql.DB { return d.sql }

func now() int64 { return time.Now().Unix() }

// batchKey carries a Batch's transaction in a context.
type batchKey struct{}

type batch struct {
	db    *DB
	tx    *sql.Tx
	stmts *stmtCache
	n     int
	// lost is set when the server ended the whole transaction (MariaDB
	// does on a deadlock: the savepoint is gone with it). Nothing more
	// may run in it, as later statements would run outside it, and the
	// batch must not commit as if what came before were recorded.
	lost error
	// latencies are the batch's latency observations, written with one
	// statement per histogram bucket before the commit (a statement and
	// a savepoint per observation made a tenth of a native assimilator's
	// pass).
	latMu     sync.Mutex
	latencies map[latencyBucket]latencySum
	// sb is the steps read ahead and the records gathered (stepbatch.go).
	sb *stepBatch
}

func (b *batch) savepoint(ctx context.Context, fn func(*sql.Tx) error) error {
	if b.lost != nil {
		return b.lost
	}
	// What was gathered goes first, and what was read ahead may change.
	if err := b.flushSteps(ctx); err != nil {
		return err
	}
	b.forgetAhead()
	b.n++
	name := fmt.Sprintf("sp%d", b.n)
	if _, err := b.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		b.lost = fmt.Errorf("state database: %w", err)
		return b.lost
	}
	if err := fn(b.tx); err != nil {
		if _, rerr := b.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rerr != nil {
			b.lost = fmt.Errorf("state database: the batch's transaction ended (%w) after: %w", rerr, err)
			return b.lost
		}
		b.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name)
		return err
	}
	if _, err := b.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name); err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	return nil
}

// Batch runs fn with one write transaction that every Tx made with the
// context fn gets joins, and commits it when fn returns nil: many records,
// one commit (the native assimilator records hundreds of steps so). Reads
// outside Tx do not see the batch's changes before the commit. fn must not
// write through another handle: the batch holds the write lock.
func (d *DB) Batch(ctx context.Context, fn func(ctx context.Context) error) error {
	tx, release, err := d.dialect.begin(ctx, d.sql)
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	defer release() // after the commit or rollback below
	defer holdWatch()()
	b := &batch{db: d, tx: tx, stmts: newStmtCache(tx)}
	defer b.stmts.Close()
	if err := fn(context.WithValue(ctx, batchKey{}, b)); err != nil {
		tx.Rollback()
		return err
	}
	b.flushSteps(ctx) // an error sets b.lost
	b.writeLatencies(ctx)
	if b.lost != nil {
		tx.Rollback()
		return b.lost
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state database commit: %w", err)
	}
	d.commits.Add(1)
	return nil
}
