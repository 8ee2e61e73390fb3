package store

import (
	"context"
	"fmt"
)

// LastStepFinished is when a step last finished (Unix seconds; 0 when
// none has).
func (d *DB) LastStepFinished(ctx context.Context) (int64, error) {
	var t int64
	if err := d.queryRow(ctx, `SELECT COALESCE(MAX(finished), 0) FROM steps`).Scan(&t); err != nil {
		return 0, fmt.Errorf("reading when a step last finished: %w", err)
	}
	return t, nil
}

// WaitingStep is the step of a running chain that BOINC holds.
type WaitingStep struct {
	User, Group, Name string
	WU                string
	WUTmpl            string // the chain's create_work WU template, relative to the project
	Created           int64  // when its work unit was created (Unix seconds)
}

// WaitingSince lists the steps of running chains whose work units BOINC
// has held since before cutoff, oldest first, at most limit.
func (d *DB) WaitingSince(ctx context.Context, cutoff int64, limit int) ([]WaitingStep, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT u.name, c.grp, c.name, s.wu_name, c.wu_tmpl, s.created
		FROM steps s JOIN chains c ON c.id = s.chain_id JOIN users u ON u.id = c.user_id
		WHERE s.state = 'queued' AND c.state = 'running' AND s.created < ? ORDER BY s.created LIMIT ?`, cutoff, limit)
	if err != nil {
		return nil, fmt.Errorf("listing waiting steps: %w", err)
	}
	defer rows.Close()
	var out []WaitingStep
	for rows.Next() {
		var w WaitingStep
		if err := rows.Scan(&w.User, &w.Group, &w.Name, &w.WU, &w.WUTmpl, &w.Created); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
