package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Counters of what the daemons did, kept in the state database because the
// process that counts (the creator) is not the one the metrics are read
// from (serve, or a CGI process).
const (
	CountInputsRelinked     = "inputs_relinked"     // inputs of waiting work units linked again from the pool
	CountInputsUnrestorable = "inputs_unrestorable" // such inputs the pool no longer had
)

// AddCount adds n to a counter.
func (d *DB) AddCount(ctx context.Context, kind string, n int) error {
	if n == 0 {
		return nil
	}
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO counters(name, n) VALUES (?, ?)
		ON CONFLICT(name) DO UPDATE SET n = n + excluded.n`, kind, n)
		return err
	})
	if err != nil {
		return fmt.Errorf("counting %s: %w", kind, err)
	}
	return nil
}

// Counts reads the counters.
func (d *DB) Counts(ctx context.Context) (map[string]uint64, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT name, n FROM counters`)
	if err != nil {
		return nil, fmt.Errorf("reading counters: %w", err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var kind string
		var n uint64
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, err
		}
		out[kind] = n
	}
	return out, rows.Err()
}
