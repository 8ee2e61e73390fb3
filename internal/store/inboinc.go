package store

import (
	"context"
	"fmt"
)

// InBoinc lists the work units BOINC holds for chains that may still use
// them: the current steps of running chains, and of stopped ones (a
// stopped chain's work units already in BOINC run to their end and are
// retrieved; -resume goes on from them).
func (d *DB) InBoinc(ctx context.Context) ([]string, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.state = 'queued' AND c.state IN ('running', 'stopped')`)
	if err != nil {
		return nil, fmt.Errorf("listing the work units BOINC holds: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var wu string
		if err := rows.Scan(&wu); err != nil {
			return nil, err
		}
		out = append(out, wu)
	}
	return out, rows.Err()
}
