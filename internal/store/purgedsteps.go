package store

import (
	"context"
	"database/sql"
)

// purgedStepsBatch bounds the purged chains one ForgetPurgedSteps call
// looks at.
const purgedStepsBatch = 500

// ForgetPurgedSteps deletes the steps, and their attempts, of purged chains
// that BOINC no longer holds (ended: done or failed), for chains purged
// before cutoff (Unix seconds). It looks at up to purgedStepsBatch purged
// chains of id above after, and returns the id to pass next (0 once the
// last purged chain was looked at). The chain rows stay: their tags keep
// a name's work units from ever being named alike again.
func (d *DB) ForgetPurgedSteps(ctx context.Context, cutoff, after int64) (next, forgotten int64, err error) {
	// The chains are found by their ended steps, not by a cursor over the
	// purged chains: a `gc` run from cron starts afresh each time.
	rows, err := d.sql.QueryContext(ctx, `SELECT DISTINCT s.chain_id FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.state IN ('done', 'failed') AND c.state = 'purged' AND c.updated < ? AND c.id > ? ORDER BY s.chain_id LIMIT ?`, cutoff, after, purgedStepsBatch)
	if err != nil {
		return after, 0, err
	}
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return after, 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return after, 0, err
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	next = ids[len(ids)-1].(int64)
	if len(ids) < purgedStepsBatch {
		next = 0
	}
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		in := inList(len(ids))
		r, err := tx.ExecContext(ctx, `DELETE FROM steps WHERE chain_id IN `+in+` AND state IN ('done', 'failed')`, ids...)
		if err != nil {
			return err
		}
		forgotten, _ = r.RowsAffected()
		// Attempts of steps no longer known: those just forgotten, and
		// the held steps the purge itself deleted.
		_, err = tx.ExecContext(ctx, `DELETE FROM step_attempts WHERE chain_id IN `+in+` AND NOT EXISTS
			(SELECT 1 FROM steps s WHERE s.chain_id = step_attempts.chain_id AND s.step = step_attempts.step)`, ids...)
		return err
	})
	if err != nil {
		return after, 0, err
	}
	return next, forgotten, nil
}
