package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Event types: every transition of a chain, kept for the events feed.
const (
	EvStepCreated   = "step_created"   // a step's work unit is in BOINC
	EvStepDone      = "step_done"      // a step's outputs are in
	EvStepRetried   = "step_retried"   // BOINC gave up on a step's work unit; it is made again
	EvChainDone     = "chain_done"     // the last step is done
	EvChainFailed   = "chain_failed"   // a step failed for good
	EvChainStopped  = "chain_stopped"  // stopped by its user
	EvChainResumed  = "chain_resumed"  // continues after a stop, failure or abort
	EvChainExtended = "chain_extended" // got more steps
	EvChainAborted  = "chain_aborted"  // stopped, its work in BOINC cancelled
	EvGroupDone     = "group_done"     // no chain of the group runs any more
)

// Event is one chain transition.
type Event struct {
	ID     int64
	Time   int64
	UserID int64
	Type   string
	Group  string
	Name   string // the chain; "" for a group's event
	Step   int    // -1 when no step applies
	Reason string
}

// addEvent records an event in the transaction of the transition.
func addEvent(ctx context.Context, tx txRunner, c Chain, typ string, step int, reason string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES (?,?,?,?,?,?,?)`,
		now(), c.UserID, typ, c.Group, c.Name, step, reason)
	if err != nil {
		return fmt.Errorf("recording event %s of chain %s: %w", typ, c.Name, err)
	}
	return nil
}

// groupDoneEvent adds group_done when the group is finished: no chain of
// it runs (or waits to), and no stopped chain of it has a step still in
// BOINC, whose outputs are still to come (-stop lets it run to its end),
// or pending: a creator may be making its work unit right now, having
// read it before the stop (PendingSteps holds it once it is not, and
// adds group_done then). A stop during such a step leaves group_done to
// that step's end, so that the group has one group_done, after its last
// files, and rboinc-retrieve -follow ends only when nothing more is to
// come.
func groupDoneEvent(ctx context.Context, tx txRunner, c Chain) error {
	var open int
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chains WHERE user_id = ? AND grp = ? AND state = 'running')
		OR EXISTS (SELECT 1 FROM chains ch JOIN steps s ON s.chain_id = ch.id WHERE ch.user_id = ? AND ch.grp = ? AND ch.state = 'stopped'
			AND s.state IN ('queued', 'creating', 'pending'))`,
		c.UserID, c.Group, c.UserID, c.Group).Scan(&open); err != nil {
		return err
	}
	if open != 0 {
		return nil
	}
	return addEvent(ctx, tx, Chain{UserID: c.UserID, Group: c.Group}, EvGroupDone, -1, "")
}

// Events returns a user's events after id, oldest first, at most limit.
func (d *DB) Events(ctx context.Context, userID, after int64, limit int) ([]Event, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT id, time, user_id, type, grp, name, step, reason FROM events
		WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?`, userID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.ID, &e.Time, &e.UserID, &e.Type, &e.Group, &e.Name, &e.Step, &e.Reason); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// LastEventID is the newest event's id (0 when there is none).
func (d *DB) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := d.sql.QueryRowContext(ctx, `SELECT max(id) FROM events`).Scan(&id)
	return id.Int64, err
}

// LastUserEventID is the user's newest event's id (0 when there is none):
// where the user's feed stands, telling nothing of other users' events.
func (d *DB) LastUserEventID(ctx context.Context, userID int64) (int64, error) {
	var id sql.NullInt64
	err := d.sql.QueryRowContext(ctx, `SELECT max(id) FROM events WHERE user_id = ?`, userID).Scan(&id)
	return id.Int64, err
}

// EventUsers lists the users with events after id from, up to id to.
func (d *DB) EventUsers(ctx context.Context, from, to int64) ([]int64, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT DISTINCT user_id FROM events WHERE id > ? AND id <= ?`, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// ForgetEvents removes events older than before (event_retention).
func (d *DB) ForgetEvents(ctx context.Context, before int64) (int64, error) {
	var n int64
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE time < ?`, before)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
