package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/rboinc/rboinc/workflow/wire"
)

// StateHeld is a step recorded with its inputs whose work unit is not to
// be made yet: the next step of a stopped, failed or aborted chain, and the
// step after a chain's last (for -extend). -resume and -extend release it.
const StateHeld = "held"

// RetryStep makes a step whose work unit BOINC gave up on wait for a new
// work unit, newWU, from the same inputs, not before notBefore: the old
// work unit becomes an earlier attempt (with reason), the step's attempts
// one more. It reports false when the step had moved on already (a second
// call for the same work unit).
func (d *DB) RetryStep(ctx context.Context, c Chain, step int, oldWU, newWU, reason string, notBefore int64) (bool, error) {
	return d.retryStep(ctx, c, step, oldWU, newWU, reason, notBefore, 1)
}

// RemakeStep is RetryStep for a work unit that failed through no fault of
// its step (its inputs could not be downloaded, and are back): the step's
// attempts stay as they were. reason should begin with
// ReasonInputDownload, which DownloadRemakes counts.
func (d *DB) RemakeStep(ctx context.Context, c Chain, step int, oldWU, newWU, reason string, notBefore int64) (bool, error) {
	return d.retryStep(ctx, c, step, oldWU, newWU, reason, notBefore, 0)
}

// ReasonInputDownload begins the reason of an attempt made again because
// its inputs could not be downloaded.
const ReasonInputDownload = "input download failed"

// DownloadRemakes counts the earlier attempts of a step made again because
// their inputs could not be downloaded.
func (d *DB) DownloadRemakes(ctx context.Context, chainID int64, step int) (int, error) {
	var n int
	err := d.queryRow(ctx, `SELECT count(*) FROM step_attempts WHERE chain_id = ? AND step = ? AND reason LIKE ?`,
		chainID, step, ReasonInputDownload+"%").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting a step's remakes: %w", err)
	}
	return n, nil
}

func (d *DB) retryStep(ctx context.Context, c Chain, step int, oldWU, newWU, reason string, notBefore int64, counted int) (bool, error) {
	var retried bool
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		retried = false
		var attempts int
		err := tx.QueryRowContext(ctx, `SELECT attempts FROM steps WHERE chain_id = ? AND step = ? AND wu_name = ? AND state IN ('queued', 'creating', 'pending')`,
			c.ID, step, oldWU).Scan(&attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := renameStep(ctx, tx, c.ID, step, oldWU, newWU, attempts, reason, now()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'pending', attempts = attempts + ?, not_before = ?, created = ?
			WHERE chain_id = ? AND step = ?`, counted, notBefore, now(), c.ID, step); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chains SET error = ?, updated = ? WHERE id = ?`, reason, now(), c.ID); err != nil {
			return err
		}
		retried = true
		if err := addEvent(ctx, tx, c, EvStepRetried, step, reason); err != nil {
			return err
		}
		// A stopped chain's step leaves BOINC here (made again, it waits
		// for -resume, held: no creator is making it): the stop's
		// group_done waited for it.
		var state string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM chains WHERE id = ?`, c.ID).Scan(&state); err != nil {
			return err
		}
		if state == "stopped" {
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'held' WHERE chain_id = ? AND step = ? AND state = 'pending'`, c.ID, step); err != nil {
				return err
			}
			return groupDoneEvent(ctx, tx, c)
		}
		return nil
	})
	return retried, err
}

// renameStep gives a step a new work-unit name, its inputs going along;
// the old name is kept as an earlier attempt, so that a late call for it
// is recognised.
func renameStep(ctx context.Context, tx *sql.Tx, chainID int64, step int, oldWU, newWU string, attempt int, reason string, ended int64) error {
	// A name an earlier attempt had is BOINC's already (its work unit
	// ended there): made again under it, the step would wait for ever
	// on that ended work unit. Checked before any write, so the caller
	// may try another name in the same transaction.
	var used int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM step_attempts WHERE wu_name = ?`, newWU).Scan(&used); err != nil {
		return err
	}
	if used > 0 || newWU == oldWU {
		return fmt.Errorf("work unit %s, an earlier attempt's: %w", newWU, ErrExists)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO step_attempts(wu_name, chain_id, step, attempt, reason, ended) VALUES (?,?,?,?,?,?)`,
		oldWU, chainID, step, attempt, reason, ended); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE steps SET wu_name = ? WHERE chain_id = ? AND step = ?`, newWU, chainID, step); err != nil {
		if isUnique(err) {
			return fmt.Errorf("work unit %s: %w", newWU, ErrExists)
		}
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE step_inputs SET wu_name = ? WHERE wu_name = ?`, newWU, oldWU)
	return err
}

// renameFresh renames step k of c (work unit wu) to a name newWU makes,
// another one while newWU's is one an earlier attempt had.
func renameFresh(ctx context.Context, tx *sql.Tx, c *Chain, k int, wu string, newWU NameWU, attempt int, reason string, ended int64) (string, error) {
	for range 20 {
		n := newWU(*c, k)
		err := renameStep(ctx, tx, c.ID, k, wu, n, attempt, reason, ended)
		if errors.Is(err, ErrExists) {
			continue
		}
		return n, err
	}
	return "", fmt.Errorf("no free work-unit name for step %d of chain %s", k, c.Name)
}

// EarlierAttempt tells whether wu is the work unit of an earlier attempt of
// a step (BOINC may report it again; it is over for rboinc).
func (d *DB) EarlierAttempt(ctx context.Context, wu string) (bool, error) {
	var n int
	err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM step_attempts WHERE wu_name = ?`, wu).Scan(&n)
	return n > 0, err
}

// Abort stops a user's running or stopped chains of a group (or one) as
// aborted, with reason, holds their steps waiting for a work unit, and
// returns the chains it aborted and the work units BOINC holds for the
// selection's aborted chains (to cancel): those aborted before too, so
// that an -abort sent again (its answer lost, or 503 outcome_unknown after
// the state was committed) still has their work units cancelled.
func (d *DB) Abort(ctx context.Context, userID int64, group, name, reason string) ([]Chain, []string, error) {
	chains, err := d.setState(ctx, userID, group, name, []string{"running", "stopped"}, "aborted", EvChainAborted, reason)
	if err != nil {
		return chains, nil, err
	}
	if afterAbortState != nil {
		afterAbortState()
	}
	var wus []string
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		wus = nil
		// Read here, under the write lock: a -resume since the abort's own
		// commit runs a chain again, and its steps are its own to make,
		// not to hold or cancel.
		aborted, err := chainsIn(ctx, tx, userID, group, name, []string{"aborted"})
		if err != nil {
			return err
		}
		for _, c := range aborted {
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'held' WHERE chain_id = ? AND state = 'pending'`, c.ID); err != nil {
				return err
			}
			ws, err := scanStrings(tx.QueryContext(ctx, `SELECT wu_name FROM steps WHERE chain_id = ? AND state IN ('queued', 'creating')`, c.ID))
			if err != nil {
				return err
			}
			wus = append(wus, ws...)
		}
		return nil
	})
	return chains, wus, err
}

// afterAbortState, when set (by tests), runs between Abort's two
// transactions.
var afterAbortState func()

// Stranded returns those of wus, work units just made in BOINC and
// recorded, whose step belongs to no live chain any more: its chain
// aborted or purged, or the step gone (purged held, or named anew by a
// -resume) while its work unit was being made. An -abort or -purge
// cancels what BOINC holds when it commits; one that committed while a
// creator made a work unit missed it, and the creator cancels it instead.
// Asked after the work units were recorded queued: a chain aborted or
// purged after this read finds its step queued and cancels it itself.
func (d *DB) Stranded(ctx context.Context, wus []string) ([]string, error) {
	var out []string
	for start := 0; start < len(wus); start += 500 {
		part := wus[start:min(start+500, len(wus))]
		args := make([]any, len(part))
		for i, w := range part {
			args[i] = w
		}
		live, err := scanStrings(d.sql.QueryContext(ctx, `SELECT s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id
			WHERE c.state NOT IN ('aborted', 'purged') AND s.wu_name IN `+inList(len(part)), args...))
		if err != nil {
			return nil, fmt.Errorf("looking up the chains of work units just made: %w", err)
		}
		if len(live) == len(part) {
			continue
		}
		alive := make(map[string]bool, len(live))
		for _, w := range live {
			alive[w] = true
		}
		for _, w := range part {
			if !alive[w] {
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// InFlight lists the work units BOINC holds for a user's chains of a
// group (or one), for cancelling them (-stop -cancel, -purge).
func (d *DB) InFlight(ctx context.Context, userID int64, group, name string) ([]string, error) {
	q := `SELECT s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id WHERE c.user_id = ? AND c.grp = ? AND c.state != 'purged' AND s.state IN ('queued', 'creating')`
	args := []any{userID, group}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	return scanStrings(d.sql.QueryContext(ctx, q, args...))
}

// PurgedInFlight lists the work units BOINC may still hold for a user's
// purged chains of a group (or one), for cancelling them after a -purge:
// read after its commit, and of the chains purged before too, so that a
// -purge sent again (its answer lost, or 503 outcome_unknown after the
// commit) still cancels what the first left running.
func (d *DB) PurgedInFlight(ctx context.Context, userID int64, group, name string) ([]string, error) {
	q := `SELECT s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id WHERE c.user_id = ? AND c.grp = ? AND c.state = 'purged' AND s.state IN ('queued', 'creating')`
	args := []any{userID, group}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	return scanStrings(d.sql.QueryContext(ctx, q, args...))
}

// NameWU names the work unit of a step made anew (a retry, a resumed or
// extended chain): a fresh tag for each, as BOINC names are used once.
type NameWU func(c Chain, step int) string

// Resume sets a user's stopped, failed or aborted chains of a group (or
// one) running again from their last good step: that step's work unit is
// made anew (attempts counted afresh) from the inputs it had. It returns
// the chains resumed and, for each chain that cannot be, why.
// With in, the restarted step reads the new contents given (see NewInputs);
// a chain whose step is in BOINC already cannot take them.
func (d *DB) Resume(ctx context.Context, userID int64, group, name string, newWU NameWU, in *NewInputs) ([]Chain, []string, error) {
	return d.restart(ctx, userID, group, name, []string{"stopped", "failed", "aborted"}, 0, EvChainResumed, newWU, in)
}

// NewInputs are contents a resumed step reads instead of those it had, by
// input position. Each next step starts from its step's inputs, so a
// position no output feeds keeps the new content for the later steps too.
type NewInputs struct {
	At map[int]string
}

// replaceInputs gives work unit wu (a restarted step of chain c) the new
// contents: in its own inputs, or, for a step 0 that reads its chain's
// (it has none of its own), in the chain's.
func replaceInputs(ctx context.Context, tx *sql.Tx, c *Chain, wu string, in *NewInputs) error {
	var own int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM step_inputs WHERE wu_name = ?`, wu).Scan(&own); err != nil {
		return err
	}
	for pos, sum := range in.At {
		update, insert, args := `UPDATE step_inputs SET md5 = ? WHERE wu_name = ? AND pos = ?`, `INSERT INTO step_inputs(wu_name, pos, md5) VALUES (?,?,?)`, []any{wu, pos}
		if own == 0 {
			update, insert, args = `UPDATE chain_inputs SET md5 = ? WHERE chain_id = ? AND pos = ?`, `INSERT INTO chain_inputs(chain_id, pos, md5) VALUES (?,?,?)`, []any{c.ID, pos}
		}
		res, err := tx.ExecContext(ctx, update, append([]any{sum}, args...)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := tx.ExecContext(ctx, insert, append(args, sum)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Extend adds k steps to a user's chains of a group (or one), done ones
// included, which continue from their last outputs; the work units made
// from now on carry the new length in their names.
func (d *DB) Extend(ctx context.Context, userID int64, group, name string, k int, newWU NameWU) ([]Chain, []string, error) {
	return d.restart(ctx, userID, group, name, []string{"running", "done", "stopped", "failed", "aborted"}, k, EvChainExtended, newWU, nil)
}

// restart is Resume (extra 0) and Extend (extra > 0).
func (d *DB) restart(ctx context.Context, userID int64, group, name string, from []string, extra int, event string, newWU NameWU, in *NewInputs) ([]Chain, []string, error) {
	var done []Chain
	var refused []string
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		done, refused = nil, nil
		cs, err := chainsIn(ctx, tx, userID, group, name, from)
		if err != nil {
			return err
		}
		for _, c := range cs {
			why, err := restartOne(ctx, tx, &c, extra, newWU, in)
			if err != nil {
				return err
			}
			if why != "" {
				refused = append(refused, c.Name+": "+why)
				continue
			}
			reason := ""
			if extra > 0 {
				reason = fmt.Sprintf("%d more steps, %d in all", extra, c.NSteps)
			}
			if in != nil && len(in.At) > 0 {
				reason = fmt.Sprintf("with %s for step %d", plural(len(in.At), "new input", "new inputs"), c.StepsDone)
			}
			if err := addEvent(ctx, tx, c, event, c.StepsDone, reason); err != nil {
				return err
			}
			done = append(done, c)
		}
		return nil
	})
	return done, refused, err
}

// restartOne sets one chain running again (with extra steps), its next
// step released or made anew; why says why it cannot be.
func restartOne(ctx context.Context, tx *sql.Tx, c *Chain, extra int, newWU NameWU, in *NewInputs) (why string, err error) {
	nsteps := c.NSteps + extra
	if nsteps > MaxChainSteps {
		return fmt.Sprintf("%d steps would be more than %d", nsteps, MaxChainSteps), nil
	}
	running, aborted := c.State == "running", c.State == "aborted"
	k := c.StepsDone // the step to run next
	if k >= nsteps {
		return "it has done all its steps: give -extend", nil
	}
	var wu, state string
	var attempts int
	err = tx.QueryRowContext(ctx, `SELECT wu_name, state, attempts FROM steps WHERE chain_id = ? AND step = ?`, c.ID, k).Scan(&wu, &state, &attempts)
	if errors.Is(err, sql.ErrNoRows) {
		if running && k < c.NSteps {
			state = "none" // the running step records its successor itself
		} else {
			return fmt.Sprintf("step %d's inputs are not recorded (a chain of an earlier rboinc)", k), nil
		}
	} else if err != nil {
		return "", err
	}
	// Why and when the chain ended, for the attempt it ended in (the
	// chain's own reason is cleared below).
	var ended int64
	if err := tx.QueryRowContext(ctx, `SELECT updated FROM chains WHERE id = ?`, c.ID).Scan(&ended); err != nil {
		return "", err
	}
	endReason := c.Error
	if endReason == "" {
		endReason = "the chain was " + c.State
	}
	replacing := in != nil && len(in.At) > 0
	cancelled := aborted && (state == StateQueued || state == "creating")
	if replacing && !cancelled && (state == StateQueued || state == "creating" || state == StatePending) {
		return fmt.Sprintf("its step %d is in BOINC already and cannot take new inputs: -abort the chain, then -resume it with them", k), nil
	}
	c.NSteps = nsteps
	if _, err := tx.ExecContext(ctx, `UPDATE chains SET state = 'running', nsteps = ?, error = '', updated = ? WHERE id = ?`, nsteps, now(), c.ID); err != nil {
		return "", err
	}
	c.State = "running"
	if cancelled {
		state = "failed" // its work unit was cancelled: made anew
	}
	switch state {
	case "none", StatePending, StateQueued, "creating":
		// Running on: the step in BOINC (or about to be) goes on, and its
		// successor is recorded with the new length when it is done.
		return "", nil
	case StateHeld:
		// Released under a name of the new length.
		n, err := renameFresh(ctx, tx, c, k, wu, newWU, 0, "renamed for the chain's new length", now())
		if err != nil {
			return "", err
		}
		if replacing {
			if err := replaceInputs(ctx, tx, c, n, in); err != nil {
				return "", err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE steps SET state = 'pending', attempts = 1, not_before = 0, created = ? WHERE chain_id = ? AND step = ?`, now(), c.ID, k)
		return "", err
	case "failed", "done":
		// A failed step (or an aborted one's cancelled work unit) is made
		// anew from the same inputs, attempts counted afresh; the attempt
		// that ended keeps the reason it ended with.
		n, err := renameFresh(ctx, tx, c, k, wu, newWU, attempts, endReason, ended)
		if err != nil {
			return "", err
		}
		if replacing {
			if err := replaceInputs(ctx, tx, c, n, in); err != nil {
				return "", err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE steps SET state = 'pending', attempts = 1, not_before = 0, created = ?, finished = 0 WHERE chain_id = ? AND step = ?`, now(), c.ID, k)
		return "", err
	}
	return fmt.Sprintf("step %d is %s", k, state), nil
}

// MaxChainSteps bounds a chain's length after an extend: a submission's
// bound, shared with the clients.
const MaxChainSteps = wire.MaxChainSteps

// Current is a chain's current (or last) step, for its status.
type Current struct {
	WU       string
	State    string
	Attempts int
}

// CurrentSteps returns the current step of each of a user's chains (of a
// group, or one), by chain id: the step after the last done one.
func (d *DB) CurrentSteps(ctx context.Context, userID int64, group, name string) (map[int64]Current, error) {
	q := `SELECT c.id, s.wu_name, s.state, s.attempts FROM chains c JOIN steps s ON s.chain_id = c.id
		AND s.step = CASE WHEN c.steps_done >= c.nsteps THEN c.nsteps - 1 ELSE c.steps_done END
		WHERE c.user_id = ? AND c.state != 'purged'`
	args := []any{userID}
	if group != "" {
		q += ` AND c.grp = ?`
		args = append(args, group)
	}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]Current{}
	for rows.Next() {
		var id int64
		var cur Current
		if err := rows.Scan(&id, &cur.WU, &cur.State, &cur.Attempts); err != nil {
			return nil, err
		}
		out[id] = cur
	}
	return out, rows.Err()
}

// GroupLeads returns, for each (user, group) of the chains given, the
// most steps a running chain of the group has done.
func (d *DB) GroupLeads(ctx context.Context, chains []Chain) (map[[2]string]int, error) {
	out := map[[2]string]int{}
	for _, c := range chains {
		key := [2]string{fmt.Sprint(c.UserID), c.Group}
		if _, ok := out[key]; ok {
			continue
		}
		var lead sql.NullInt64
		if err := d.sql.QueryRowContext(ctx, `SELECT max(steps_done) FROM chains WHERE user_id = ? AND grp = ? AND state = 'running'`,
			c.UserID, c.Group).Scan(&lead); err != nil {
			return nil, err
		}
		out[key] = int(lead.Int64)
	}
	return out, nil
}

// LateSteps returns the work units BOINC has held since before cutoff for
// steps of running chains not given a replica yet, at most limit.
func (d *DB) LateSteps(ctx context.Context, cutoff int64, limit int) ([]string, error) {
	return scanStrings(d.sql.QueryContext(ctx, `SELECT s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.state = 'queued' AND s.created < ? AND s.late = 0 AND c.state = 'running' ORDER BY s.created LIMIT ?`, cutoff, limit))
}

// MarkLate records that a step's work unit got its extra replica.
func (d *DB) MarkLate(ctx context.Context, wu string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE steps SET late = 1 WHERE wu_name = ?`, wu)
		return err
	})
}

// plural is n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
