package store

import (
	"context"
	"database/sql"
	"strings"
)

// StatePending is a step the hook recorded whose work unit is still to be
// created: the batch creator (engine.CreatePending) makes the work units of
// many such steps with one create_work run, so a hook call need not wait for
// a create_work process of its own.
const StatePending = "pending"

// StateQueued is a step whose work unit BOINC holds.
const StateQueued = "queued"

// PendingStep is a step waiting for its work unit, with its chain.
type PendingStep struct {
	Chain Chain
	Step  Step
}

// AnyPending tells cheaply whether some step waits for its work unit.
func (d *DB) AnyPending(ctx context.Context) (bool, error) {
	var n int
	err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM steps WHERE state = 'pending' AND not_before <= ? LIMIT 1) AS due`, now()).Scan(&n)
	return n > 0, err
}

// PendingSteps returns up to limit steps waiting for their work unit, oldest
// first, with their inputs. Pending steps of chains that no longer run
// (stopped, failed or purged since the hook recorded them) are forgotten
// instead: such a chain gets nothing new.
func (d *DB) PendingSteps(ctx context.Context, limit int) ([]PendingStep, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT `+chainCols+`, s.step, s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id JOIN users u ON u.id = c.user_id
		WHERE s.state = 'pending' AND s.not_before <= ? ORDER BY s.rowid LIMIT ?`, now(), limit)
	if err != nil {
		return nil, err
	}
	var out []PendingStep
	var dead []string
	var held []PendingStep
	for rows.Next() {
		var p PendingStep
		c := &p.Chain
		if err := rows.Scan(&c.ID, &c.UserID, &c.User, &c.Group, &c.Name, &c.Queue, &c.App, &c.Tag, &c.NSteps, &c.Priority, &c.Params, &c.WUTmpl, &c.ResTmpl, &c.Layout, &c.State, &c.StepsDone, &c.Error, &c.MaxAttempts, &c.Args, &c.Consumer, &p.Step.Step, &p.Step.WU); err != nil {
			rows.Close()
			return nil, err
		}
		c.User = strings.ToUpper(c.User)
		p.Step.ChainID, p.Step.State = c.ID, StatePending
		if c.State == "purged" {
			dead = append(dead, p.Step.WU)
			continue
		}
		if c.State != "running" {
			held = append(held, p)
			continue
		}
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Step.Inputs, err = d.stepInputs(ctx, out[i].Step.WU); err != nil {
			return nil, err
		}
	}
	if len(dead) > 0 {
		if err := d.dropPending(ctx, dead); err != nil {
			return nil, err
		}
	}
	if len(held) > 0 {
		if afterPendingRead != nil {
			afterPendingRead()
		}
		// A stopped (failed, aborted) chain keeps its next step, inputs
		// and all, for -resume; unless the chain runs again by now: a
		// -resume between the read above and this write found the step
		// pending and left it so, and holding it then would leave the
		// chain running with no work unit ever made.
		if err := d.Tx(ctx, func(tx *sql.Tx) error {
			var stopped []Chain
			for _, p := range held {
				// The chain's state now, not as read above: a purge
				// meanwhile finished its group already (its step is
				// dropped on the next pass, as a purged chain's).
				var state string
				if err := tx.QueryRowContext(ctx, `SELECT state FROM chains WHERE id = ?`, p.Chain.ID).Scan(&state); err != nil {
					return err
				}
				if state == "running" || state == "purged" {
					continue
				}
				res, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'held' WHERE wu_name = ? AND state = 'pending'`, p.Step.WU)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n == 1 && state == "stopped" {
					stopped = append(stopped, p.Chain)
				}
			}
			// A stopped chain's pending step kept its group's group_done
			// back (a creator might have been making it): it is not made
			// now, and the group may be finished.
			seen := map[[2]any]bool{}
			for _, c := range stopped {
				k := [2]any{c.UserID, c.Group}
				if seen[k] {
					continue
				}
				seen[k] = true
				if err := groupDoneEvent(ctx, tx, c); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// afterPendingRead, when set (by tests), runs between PendingSteps' read
// and its holding of the steps of chains that did not run.
var afterPendingRead func()

// dropPending forgets pending steps (never created in BOINC), so nothing
// keeps their inputs alive. A step no longer pending is left alone.
func (d *DB) dropPending(ctx context.Context, wus []string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		st := newStmtCache(tx)
		defer st.Close()
		for _, w := range wus {
			res, err := st.ExecContext(ctx, `DELETE FROM steps WHERE wu_name = ? AND state = 'pending'`, w)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			if _, err := st.ExecContext(ctx, `DELETE FROM step_inputs WHERE wu_name = ?`, w); err != nil {
				return err
			}
		}
		return nil
	})
}

// QueuePending records pending (or creating) steps' work units as
// created, in one transaction; a step that has moved on meanwhile (its
// work unit, found in BOINC, already finished) is left as it is.
func (d *DB) QueuePending(ctx context.Context, wus ...string) error {
	// Under the write lock, as every write: on MariaDB a statement outside
	// it could deadlock with a writer's transaction.
	return d.Tx(ctx, func(tx *sql.Tx) error {
		st := newStmtCache(tx)
		defer st.Close()
		for _, wu := range wus {
			if _, err := st.ExecContext(ctx, `UPDATE steps SET state = 'queued' WHERE wu_name = ? AND state IN ('pending', 'creating')`, wu); err != nil {
				return err
			}
		}
		return nil
	})
}
