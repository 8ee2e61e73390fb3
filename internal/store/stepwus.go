package store

import "context"

// StepWUs lists, per group, the work units BOINC holds for a user's steps
// (queued, done or failed) created at or after since, and those of the
// steps' earlier attempts that ended since (every run BOINC made of a
// step counts); group "" means every group.
func (d *DB) StepWUs(ctx context.Context, userID int64, group string, since int64) (map[string][]string, error) {
	q := `SELECT c.grp, s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE c.user_id = ? AND c.state != 'purged' AND s.state IN ('queued', 'done', 'failed') AND s.created >= ?`
	args := []any{userID, since}
	if group != "" {
		q += ` AND c.grp = ?`
		args = append(args, group)
	}
	// Attempt 0 is a name a held step had, never a work unit in BOINC.
	q += ` UNION ALL SELECT c.grp, a.wu_name FROM step_attempts a JOIN chains c ON c.id = a.chain_id
		WHERE c.user_id = ? AND c.state != 'purged' AND a.attempt > 0 AND a.ended >= ?`
	args = append(args, userID, since)
	if group != "" {
		q += ` AND c.grp = ?`
		args = append(args, group)
	}
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var g, wu string
		if err := rows.Scan(&g, &wu); err != nil {
			return nil, err
		}
		out[g] = append(out[g], wu)
	}
	return out, rows.Err()
}
