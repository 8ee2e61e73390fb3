package store

import (
	"context"
	"database/sql"
)

// HeldStep is a step whose work unit BOINC holds (queued or being created).
type HeldStep struct {
	WU   string
	Step int
}

// SetPriority gives a user's chains of a group (or one), purged ones
// excepted, a new base priority: the work units of their next steps get it
// less one per step. It returns how many chains it changed and the steps
// whose work units BOINC holds now, whose priority is BOINC's to change.
func (d *DB) SetPriority(ctx context.Context, userID int64, group, name string, priority int) (int, []HeldStep, error) {
	var n int
	var held []HeldStep
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		n, held = 0, nil
		where := ` WHERE user_id = ? AND grp = ? AND state != 'purged'`
		args := []any{userID, group}
		if name != "" {
			where += ` AND name = ?`
			args = append(args, name)
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chains`+where, args...).Scan(&n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chains SET priority = ?, updated = ?`+where, append([]any{priority, now()}, args...)...); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT s.wu_name, s.step FROM steps s JOIN chains c ON c.id = s.chain_id
			WHERE c.user_id = ? AND c.grp = ? AND c.state != 'purged' AND s.state IN ('queued', 'creating')`+nameIs(name), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h HeldStep
			if err := rows.Scan(&h.WU, &h.Step); err != nil {
				return err
			}
			held = append(held, h)
		}
		return rows.Err()
	})
	return n, held, err
}

// nameIs narrows a query on chains c to one name when name is given (its
// value is the query's last argument).
func nameIs(name string) string {
	if name == "" {
		return ""
	}
	return ` AND c.name = ?`
}
