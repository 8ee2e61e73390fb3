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

// Close releases the statements (the transaction's end would too).
func (s *stmtCache) Close() {
	for _, st := range s.m {
		st.Close()
	}
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
