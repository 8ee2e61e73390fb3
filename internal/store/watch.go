package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
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

// MarkAttention notes on the live chain that a work unit name points to (by
// user, group and chain name: userUpper as work-unit names spell it) why it
// needs its owner's attention, in the chain's reason; it returns how many
// chains it marked (0 when there is none).
func (d *DB) MarkAttention(ctx context.Context, userUpper, group, name, reason string) (int, error) {
	var n int64
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		// The users first: see bykeys.go.
		users, err := column(ctx, tx, `SELECT id FROM users WHERE upper(name) = ?`, userUpper)
		if err != nil || len(users) == 0 {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE chains SET error = ?, updated = ?
		WHERE user_id IN `+inList(len(users))+` AND grp = ? AND name = ? AND state != 'purged'`,
			append(append([]any{reason, now()}, anys(users)...), group, name)...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("marking chain %s of group %s: %w", name, group, err)
	}
	return int(n), nil
}

// AssignedRunning counts the running chains submitted as assigned work
// (-assign_user_all) and names one of them (group/name of user).
func (d *DB) AssignedRunning(ctx context.Context) (int, string, error) {
	var n int
	var one sql.NullString
	err := d.queryRow(ctx, `SELECT count(*), min(c.grp || '/' || c.name || ' of ' || u.name) FROM chains c JOIN users u ON u.id = c.user_id
		WHERE c.state = 'running' AND json_extract(c.params, '$.TargetUser') > 0`).Scan(&n, &one)
	if err != nil {
		return 0, "", fmt.Errorf("counting assigned chains: %w", err)
	}
	return n, one.String, nil
}

// LiveChain is what a new submission must know of a live chain that has
// one of its names.
type LiveChain struct {
	Name, Digest, FirstWU string
}

// LiveByName finds the user's live chains of group that have one of names.
func (d *DB) LiveByName(ctx context.Context, u User, group string, names []string) (map[string]LiveChain, error) {
	out := map[string]LiveChain{}
	for len(names) > 0 {
		part := names[:min(len(names), 500)]
		names = names[len(part):]
		args := []any{u.ID, group}
		for _, n := range part {
			args = append(args, n)
		}
		rows, err := d.sql.QueryContext(ctx, `SELECT name, digest, tag, nsteps FROM chains WHERE user_id = ? AND grp = ? AND state != 'purged'
			AND name IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("looking up chains of group %s: %w", group, err)
		}
		for rows.Next() {
			var lc LiveChain
			var tag string
			var nsteps int
			if err := rows.Scan(&lc.Name, &lc.Digest, &tag, &nsteps); err != nil {
				rows.Close()
				return nil, err
			}
			lc.FirstWU = naming.Format(lc.Name, u.Name, group, 0, nsteps, tag)
			out[lc.Name] = lc
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
