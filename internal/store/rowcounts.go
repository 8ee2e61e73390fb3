package store

import (
	"context"
	"fmt"
)

// RowCounts counts the rows of each of rboinc's state tables, by table
// name (without MariaDB's prefix): what a soak or an administrator checks
// for rows nobody collects.
func (d *DB) RowCounts(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(tables))
	for _, t := range tables {
		var n int64
		if err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("counting the rows of %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}
