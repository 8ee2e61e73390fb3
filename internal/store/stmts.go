package store

import (
	"context"
	"database/sql"
	"strings"
)

// stmtCache prepares each distinct statement once per transaction: a
// submission runs the same few inserts for thousands of chains, and
// preparing a statement costs about as much as running it.
type stmtCache struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func newStmtCache(tx *sql.Tx) *stmtCache { return &stmtCache{tx: tx, m: map[string]*sql.Stmt{}} }

func (s *stmtCache) prepare(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.m[q]; ok {
		return st, nil
	}
	st, err := s.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.m[q] = st
	return st, nil
}

// ExecContext runs q through its prepared statement.
func (s *stmtCache) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := s.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryContext runs q through its prepared statement.
func (s *stmtCache) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs q through its prepared statement.
func (s *stmtCache) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := s.prepare(ctx, q)
	if err != nil {
		return s.tx.QueryRowContext(ctx, q, args...) // carries the error
	}
	return st.QueryRowContext(ctx, args...)
}

// Close releases the statements (the transaction's end would too).
func (s *stmtCache) Close() {
	for _, st := range s.m {
		st.Close()
	}
}

// prepared returns the statement for q, prepared once for the life of the
// database: the lookups behind every request (a token, a result file) run
// thousands of times, and parsing them costs more than running them.
func (d *DB) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := d.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := d.sql.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := d.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// queryRow is QueryRowContext through the prepared statement of q.
func (d *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := d.prepared(ctx, q)
	if err != nil {
		return d.sql.QueryRowContext(ctx, q, args...) // carries the error
	}
	return st.QueryRowContext(ctx, args...)
}

// query is QueryContext through the prepared statement of q.
func (d *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := d.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// txRunner runs statements in a transaction: the transaction itself, or
// the statement cache of the batch it belongs to.
type txRunner interface {
	execer
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// inTx gives what runs tx's statements: within a Batch (ctx from it) the
// batch's cache, which prepares each statement once for the hundreds of
// records of the batch; otherwise tx.
func inTx(ctx context.Context, tx *sql.Tx) txRunner {
	if b, ok := ctx.Value(batchKey{}).(*batch); ok && b.tx == tx {
		return b.stmts
	}
	return tx
}

// execer is a transaction or its statement cache.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// valueRows is "(?,?,?),(?,?,?)" for n rows of k columns: one INSERT for
// all the input positions of a chain or step.
func valueRows(n, k int) string {
	row := "(?" + strings.Repeat(",?", k-1) + ")"
	return row + strings.Repeat(","+row, n-1)
}
