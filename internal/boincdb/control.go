package boincdb

import (
	"context"
	"database/sql"
	"fmt"
)

// Live control of work units already in BOINC, done as BOINC's own tools
// do it, in its database; the transitioner (woken by transition_time) does
// the rest.

// Cancel is what BOINC's cancel_jobs does for the work units with these
// ids: their results not sent yet (or inactive) are over and not needed,
// and each work unit gets error_mask bit 16 (cancelled) and is due for the
// transitioner, which makes it ready for assimilation. Results in progress
// are left to finish or time out. It returns how many work units it
// cancelled: those cancelled before (an -abort or -purge sent again) and
// those assimilated already are not counted, nor changed, but for results
// of theirs made unsent since, which end as the others.
func (d *DB) Cancel(ctx context.Context, ids []int64) (int, error) {
	total := 0
	for len(ids) > 0 {
		n := min(len(ids), 500)
		part := ids[:n]
		ids = ids[n:]
		var cancelled int64 // set by the transaction's last (committed) try
		err := d.Tx(ctx, func(tx *sql.Tx) error {
			// Work units cancelled before whose results were made unsent
			// since (an -abort or -purge sent again): due for the
			// transitioner again, their results ending below.
			args := append([]any{now()}, anys(part)...)
			args = append(args, AssimilateInit, ErrCancelled, ServerUnsent)
			if _, err := tx.ExecContext(ctx, `UPDATE workunit SET transition_time = ?
				WHERE id IN `+inList(n)+` AND assimilate_state = ? AND error_mask & ? != 0
				AND EXISTS (SELECT 1 FROM result WHERE result.workunitid = workunit.id AND result.server_state <= ?)`, args...); err != nil {
				return err
			}
			args = append([]any{ErrCancelled, now()}, anys(part)...)
			args = append(args, AssimilateInit, ErrCancelled)
			res, err := tx.ExecContext(ctx, `UPDATE workunit SET error_mask = error_mask | ?, transition_time = ?
				WHERE id IN `+inList(n)+` AND assimilate_state = ? AND error_mask & ? = 0`, args...)
			if err != nil {
				return err
			}
			if cancelled, err = res.RowsAffected(); err != nil {
				return err
			}
			args = append([]any{ServerOver, OutcomeDidntNeed, ServerUnsent}, anys(part)...)
			_, err = tx.ExecContext(ctx, `UPDATE result SET server_state = ?, outcome = ?
				WHERE server_state <= ? AND workunitid IN `+inList(n), args...)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("cancelling work units in BOINC's database: %w", err)
		}
		total += int(cancelled)
	}
	return total, nil
}

// SetPriority changes the priority of work units and of their results not
// sent yet, which the feeder orders by. It returns how many work units it
// changed.
func (d *DB) SetPriority(ctx context.Context, ids []int64, priority int) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var changed int
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		args := append([]any{priority}, anys(ids)...)
		res, err := tx.ExecContext(ctx, `UPDATE workunit SET priority = ? WHERE id IN `+inList(len(ids)), args...)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return err
		}
		changed = int(k)
		args = append([]any{priority}, anys(ids)...)
		args = append(args, ServerUnsent)
		_, err = tx.ExecContext(ctx, `UPDATE result SET priority = ? WHERE workunitid IN `+inList(len(ids))+` AND server_state = ?`, args...)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("changing priorities in BOINC's database: %w", err)
	}
	return changed, nil
}

// AddReplica asks BOINC for one more result of a work unit not decided
// yet (a late step: another host may return it sooner): target_nresults
// one more, max_total_results and max_success_results raised when they
// would forbid it, and the work unit due for the transitioner, which
// creates the result. It reports whether the work unit could take one.
func (d *DB) AddReplica(ctx context.Context, id int64) (bool, error) {
	var added bool
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		added = false
		var target, maxTotal, maxSuccess, assim, mask int
		err := tx.QueryRowContext(ctx, `SELECT target_nresults, max_total_results, max_success_results, assimilate_state, error_mask
			FROM workunit WHERE id = ?`, id).Scan(&target, &maxTotal, &maxSuccess, &assim, &mask)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		if assim != AssimilateInit || mask != 0 {
			return nil // decided: nothing to replicate
		}
		var results int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM result WHERE workunitid = ?`, id).Scan(&results); err != nil {
			return err
		}
		target++
		maxTotal = max(maxTotal, results+1)
		maxSuccess = max(maxSuccess, target)
		_, err = tx.ExecContext(ctx, `UPDATE workunit SET target_nresults = ?, max_total_results = ?, max_success_results = ?,
			transition_time = ? WHERE id = ?`, target, maxTotal, maxSuccess, now(), id)
		added = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("adding a replica in BOINC's database: %w", err)
	}
	return added, nil
}

// WUIDs looks work units up by name; names BOINC does not hold are left
// out.
func (d *DB) WUIDs(ctx context.Context, names []string) (map[string]int64, error) {
	out := map[string]int64{}
	for len(names) > 0 {
		n := min(len(names), 500)
		rows, err := d.QueryContext(ctx, "SELECT id, name FROM workunit WHERE name IN "+inList(n), anys(names[:n])...)
		if err != nil {
			return nil, fmt.Errorf("looking up work units: %w", err)
		}
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return nil, err
			}
			out[name] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		names = names[n:]
	}
	return out, nil
}

// RaisePriority raises a work unit's priority, and its unsent results',
// by delta.
func (d *DB) RaisePriority(ctx context.Context, id int64, delta int) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE workunit SET priority = priority + ? WHERE id = ?`, delta, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE result SET priority = priority + ? WHERE workunitid = ? AND server_state = ?`, delta, id, ServerUnsent)
		return err
	})
}
