package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
)

// Chain is one submitted chain of work units.
type Chain struct {
	ID        int64
	UserID    int64
	User      string
	Group     string
	Name      string
	Queue     string
	App       string
	Tag       string
	NSteps    int
	Priority  int
	Params    string // JSON of boinc.WorkParams
	WUTmpl    string
	ResTmpl   string
	Layout    string // JSON snapshot of the queue's inputs and outputs
	State     string
	StepsDone int
	Error     string
	// Digest identifies what was submitted (queue, options, inputs): a
	// submission identical to an accepted one is recognised by it.
	Digest string
	// MaxAttempts is the work units a step may take (0: rboinc.json's
	// max_step_attempts).
	MaxAttempts int
	// Args is the command line the application gets at every step
	// (create_work --command_line), "" for none.
	Args string
	// Consumer takes the chain's results (wire.Consumer*): set when it is
	// made, the same for every live chain of its group.
	Consumer string
}

// WU returns the work-unit name of step s of the chain.
func (c Chain) WU(step int) string {
	return naming.Format(c.Name, c.User, c.Group, step, c.NSteps, c.Tag)
}

// Step is one work unit of a chain.
type Step struct {
	ChainID  int64
	Step     int
	WU       string
	State    string   // creating, pending, queued, done, failed, held
	Inputs   []string // content MD5 per input position
	Attempts int      // work units made for this step so far, this one included
}

// NewChain is a chain to insert, with the contents of its input positions.
type NewChain struct {
	Chain
	Inputs []string
}

const chainCols = `c.id, c.user_id, u.name, c.grp, c.name, c.queue, c.app, c.tag, c.nsteps, c.priority, c.params, c.wu_tmpl, c.res_tmpl, c.layout, c.state, c.steps_done, c.error, c.max_attempts, c.args, c.consumer`

type scanner interface{ Scan(...any) error }

func scanChain(s scanner) (Chain, error) {
	var c Chain
	err := s.Scan(&c.ID, &c.UserID, &c.User, &c.Group, &c.Name, &c.Queue, &c.App, &c.Tag, &c.NSteps, &c.Priority, &c.Params, &c.WUTmpl, &c.ResTmpl, &c.Layout, &c.State, &c.StepsDone, &c.Error, &c.MaxAttempts, &c.Args, &c.Consumer)
	return c, err
}

// CreateChains inserts the chains with their inputs and a step 0 in state
// "creating", all or nothing. Each chain gets a random tag not used before by
// a purged chain of the same name. A name in use fails the whole call with an
// error wrapping ErrExists that names the chain.
func (d *DB) CreateChains(ctx context.Context, u User, chains []NewChain) ([]Chain, error) {
	return d.CreateChainsWithin(ctx, u, chains, 0)
}

// CreateChainsWithin is CreateChains that also refuses, with an error
// wrapping ErrQuota, to take the user's chains in progress past maxRunning
// (0: no limit). The count and the inserts share one transaction, so
// concurrent submissions cannot pass the limit together.
func (d *DB) CreateChainsWithin(ctx context.Context, u User, chains []NewChain, maxRunning int) ([]Chain, error) {
	return d.CreateChainsEach(ctx, u, chains, maxRunning, nil)
}

// querier is a transaction or its statement cache.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func insertStep(ctx context.Context, ex execer, s Step) error {
	if _, err := ex.ExecContext(ctx, `INSERT INTO steps(chain_id, step, wu_name, state, created) VALUES (?,?,?,?,?)`, s.ChainID, s.Step, s.WU, s.State, now()); err != nil {
		if isUnique(err) {
			return fmt.Errorf("work unit %s: %w", s.WU, ErrExists)
		}
		return err
	}
	if len(s.Inputs) == 0 {
		return nil
	}
	args := make([]any, 0, 3*len(s.Inputs))
	for pos, m := range s.Inputs {
		args = append(args, s.WU, pos, m)
	}
	_, err := ex.ExecContext(ctx, `INSERT INTO step_inputs(wu_name, pos, md5) VALUES `+valueRows(len(s.Inputs), 3), args...)
	return err
}

// DeleteChains removes chains created by CreateChains whose work units could
// not be created, so their names are free again. A chain whose step 0 this
// process no longer owns is kept: ReviveCreating handed it to the creator
// (this process's lease ran out while it was frozen or cut off from the
// database), which may have created its work unit meanwhile; create_work
// failed here because BOINC holds it, then. Chains it cannot remove (the
// database away) are released to the creator like SetStepState's.
func (d *DB) DeleteChains(ctx context.Context, ids []int64) error {
	owner := d.leaseID()
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(ids); start += deleteChainsChunk {
			if err := deleteOwnChains(ctx, tx, ids[start:min(start+deleteChainsChunk, len(ids))], owner); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		d.abandon(nil, ids)
	}
	return err
}

// deleteChainsChunk is how many chains one statement of DeleteChains
// names: six statements a chain held the write lock for minutes when a
// submission of thousands was undone (under -race, 1,500 chains took
// SQLite over two minutes).
const deleteChainsChunk = 500

// deleteOwnChains deletes those of ids whose step 0 is still creating
// and owned by owner, with their steps, inputs and results.
func deleteOwnChains(ctx context.Context, tx *sql.Tx, ids []int64, owner string) error {
	args := make([]any, 0, len(ids)+1)
	args = append(args, owner)
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := tx.QueryContext(ctx, `SELECT chain_id FROM steps WHERE step = 0 AND state = 'creating' AND owner = ? AND chain_id IN `+inList(len(ids)), args...)
	if err != nil {
		return err
	}
	var mine []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		mine = append(mine, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(mine) == 0 {
		return nil
	}
	in := inList(len(mine))
	if err := deleteStepInputsWhere(ctx, tx, `chain_id IN `+in, mine...); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM steps WHERE chain_id IN ` + in,
		`DELETE FROM chain_inputs WHERE chain_id IN ` + in,
		`DELETE FROM results WHERE chain_id IN ` + in,
		`DELETE FROM chains WHERE id IN ` + in,
	} {
		if _, err := tx.ExecContext(ctx, q, mine...); err != nil {
			return err
		}
	}
	return nil
}

// SetStepState sets the state of the named steps. Queued is set only on
// steps still creating or pending: a work unit BOINC finished (and another
// process, or host, recorded done) before its creator got here stays done.
//
// A submission that cannot record its steps queued (the database away)
// leaves them creating, owned by this process, which lives on: they are
// released to the creator at the lease's next renewal (abandon), which
// finds their work units in BOINC.
func (d *DB) SetStepState(ctx context.Context, wus []string, state string) error {
	return d.SetStepStateAfter(ctx, wus, state, nil)
}

// SetStepStateAfter is SetStepState whose transaction, once the steps are
// set, calls after (when not nil) and commits only when it returns nil;
// its error rolls everything back and is returned as it is. A submission
// marks its steps queued while BOINC's own commit of their work units
// runs, the marking committed after it: a crash in between leaves the
// steps creating, as before. after runs under the state database's write
// lock: it must not wait for that lock itself.
func (d *DB) SetStepStateAfter(ctx context.Context, wus []string, state string, after func() error) error {
	var afterErr error
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(wus); start += stepStateChunk {
			if err := setStepStates(ctx, tx, wus[start:min(start+stepStateChunk, len(wus))], state); err != nil {
				return err
			}
		}
		if after != nil {
			afterErr = after()
			return afterErr
		}
		return nil
	})
	if afterErr != nil {
		return afterErr
	}
	if err != nil && state == StateQueued {
		d.abandon(wus, nil)
	}
	return err
}

// stepStateChunk is how many steps one statement of SetStepState names: a
// submission queues thousands at once.
const stepStateChunk = 500

func setStepStates(ctx context.Context, tx *sql.Tx, wus []string, state string) error {
	args := make([]any, len(wus))
	for i, w := range wus {
		args[i] = w
	}
	if state != StateQueued {
		_, err := tx.ExecContext(ctx, `UPDATE steps SET state = ? WHERE wu_name IN `+inList(len(wus)), append([]any{state}, args...)...)
		return err
	}
	// The steps that move get an event each, in the order given: the work
	// units are in BOINC.
	rows, err := tx.QueryContext(ctx, `SELECT s.wu_name, c.user_id, c.grp, c.name, s.step FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.state IN ('creating', 'pending') AND s.wu_name IN `+inList(len(wus)), args...)
	if err != nil {
		return err
	}
	type moving struct {
		userID    int64
		grp, name string
		step      int
	}
	found := map[string]moving{}
	for rows.Next() {
		var w string
		var m moving
		if err := rows.Scan(&w, &m.userID, &m.grp, &m.name, &m.step); err != nil {
			rows.Close()
			return err
		}
		found[w] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	moved := make([]any, 0, len(found))
	events := make([]any, 0, 7*len(found))
	t := now()
	for _, w := range wus {
		m, ok := found[w]
		if !ok {
			continue
		}
		delete(found, w) // named twice: one event
		moved = append(moved, w)
		events = append(events, t, m.userID, EvStepCreated, m.grp, m.name, m.step, "")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'queued' WHERE state IN ('creating', 'pending') AND wu_name IN `+inList(len(moved)), moved...); err != nil {
		return err
	}
	return insertValues(ctx, tx, `INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES `, 7, events)
}

// StepByWU finds a step and its chain by work-unit name.
func (d *DB) StepByWU(ctx context.Context, wu string) (Chain, Step, error) {
	if c, s, ok := d.stepAhead(ctx, wu); ok {
		return c, s, nil
	}
	row := d.queryRow(ctx, `SELECT `+chainCols+`, s.step, s.state, s.attempts FROM steps s JOIN chains c ON c.id = s.chain_id JOIN users u ON u.id = c.user_id WHERE s.wu_name = ?`, wu)
	var c Chain
	var s Step
	err := row.Scan(&c.ID, &c.UserID, &c.User, &c.Group, &c.Name, &c.Queue, &c.App, &c.Tag, &c.NSteps, &c.Priority, &c.Params, &c.WUTmpl, &c.ResTmpl, &c.Layout, &c.State, &c.StepsDone, &c.Error, &c.MaxAttempts, &c.Args, &c.Consumer, &s.Step, &s.State, &s.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return c, s, ErrNotFound
	}
	if err != nil {
		return c, s, err
	}
	c.User = strings.ToUpper(c.User)
	s.ChainID, s.WU = c.ID, wu
	s.Inputs, err = d.stepInputs(ctx, wu)
	return c, s, err
}

// StepOf finds step n of a chain.
func (d *DB) StepOf(ctx context.Context, c Chain, n int) (Step, error) {
	s := Step{ChainID: c.ID, Step: n}
	err := d.sql.QueryRowContext(ctx, `SELECT wu_name, state FROM steps WHERE chain_id = ? AND step = ?`, c.ID, n).Scan(&s.WU, &s.State)
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	if err != nil {
		return s, err
	}
	s.Inputs, err = d.stepInputs(ctx, s.WU)
	return s, err
}

// stepInputs reads what a step reads: its own rows in step_inputs, or, for
// a step 0 recorded with its chain (which has none), the chain's inputs.
func (d *DB) stepInputs(ctx context.Context, wu string) ([]string, error) {
	return scanStrings(d.query(ctx, `SELECT md5 FROM (
		SELECT pos, md5 FROM step_inputs WHERE wu_name = ?
		UNION ALL
		SELECT ci.pos, ci.md5 FROM steps s JOIN chain_inputs ci ON ci.chain_id = s.chain_id
			WHERE s.wu_name = ? AND s.step = 0 AND NOT EXISTS (SELECT 1 FROM step_inputs WHERE wu_name = ?)
	) AS step_reads ORDER BY pos`, wu, wu, wu))
}

// Result is one output file of a finished step.
type Result struct {
	ChainID int64
	Step    int
	Index   int
	File    string // <wu>_<index>
	MD5     string
	Size    int64
}

// CompleteStep records a finished step's results and, when next is given and
// the chain still runs, inserts the next step in state "creating"; all in one
// transaction. A step already done is left alone (done=false): the hook may
// be called twice for one work unit.
func (d *DB) CompleteStep(ctx context.Context, c Chain, step int, results []Result, next *Step) (done, nextCreated bool, state string, err error) {
	return d.CompleteStepPooling(ctx, c, step, results, nil, next)
}

// CompleteStepPooling is CompleteStep that also records contents just
// added to the pool (the chained outputs) in the same transaction, whether
// or not the step was already done.
func (d *DB) CompleteStepPooling(ctx context.Context, c Chain, step int, results []Result, pooled []PoolEntry, next *Step) (done, nextCreated bool, state string, err error) {
	if b, ok := ctx.Value(batchKey{}).(*batch); ok && b.db == d {
		if state, ok := b.gatherStep(c, step, results, pooled, next); ok {
			return true, state == "running", state, nil // written by flushSteps, in the batch's transaction
		}
	}
	err = d.Tx(ctx, func(sqltx *sql.Tx) error {
		tx := inTx(ctx, sqltx)
		if err := poolUpsert(ctx, tx, pooled); err != nil {
			return err
		}
		// The chain's next step reads them: its user owns them.
		if err := ownRows(ctx, tx, c.UserID, entrySums(pooled)); err != nil {
			return err
		}
		var stepState string
		if err := tx.QueryRowContext(ctx, `SELECT c.state, s.state FROM chains c JOIN steps s ON s.chain_id = c.id WHERE c.id = ? AND s.step = ?`, c.ID, step).Scan(&state, &stepState); err != nil {
			return fmt.Errorf("looking up step %d of chain %s: %w", step, c.Name, err)
		}
		if stepState == "done" || stepState == "failed" {
			return nil
		}
		done = true
		args := make([]any, 0, 6*len(results))
		for _, r := range results {
			args = append(args, c.ID, r.Step, r.Index, r.File, r.MD5, r.Size)
		}
		if err := insertValues(ctx, tx, `INSERT OR IGNORE INTO results(chain_id, step, idx, file, md5, size) VALUES `, 6, args); err != nil {
			return err
		}
		t := now()
		if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'done', finished = ? WHERE chain_id = ? AND step = ?`, t, c.ID, step); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chains SET steps_done = max(steps_done, ?), updated = ? WHERE id = ?`, step+1, t, c.ID); err != nil {
			return err
		}
		if state == "purged" {
			// The last use of this step's inputs (see Purge).
			if err := deleteStepInputsWhere(ctx, tx, `chain_id = ? AND step = ?`, c.ID, step); err != nil {
				return err
			}
		}
		if err := addEvent(ctx, tx, c, EvStepDone, step, ""); err != nil {
			return err
		}
		goOn := state == "running" && step+1 < c.NSteps
		if next != nil && state != "purged" {
			// The next step is recorded with its inputs either way: to be
			// made now, or held for -resume (a chain not running) and
			// -extend (after the last step).
			n := *next
			if !goOn {
				n.State = StateHeld
			}
			if err := insertStep(ctx, tx, n); err != nil {
				return err
			}
			nextCreated = goOn
		}
		if state == "stopped" && !endsDone(state, step, c.NSteps) {
			// The stop's group_done waited for this step's outputs.
			return groupDoneEvent(ctx, tx, c)
		}
		if goOn || !endsDone(state, step, c.NSteps) {
			return nil
		}
		state = "done"
		if _, err := tx.ExecContext(ctx, `UPDATE chains SET state = 'done', error = '' WHERE id = ?`, c.ID); err != nil {
			return err
		}
		if err := addEvent(ctx, tx, c, EvChainDone, step, ""); err != nil {
			return err
		}
		return groupDoneEvent(ctx, tx, c)
	})
	return done, nextCreated, state, err
}

// endsDone tells whether a chain in state ends done with step: a running
// chain's last step, or a stopped chain's, since the stop left it nothing
// to hold back (-resume would have nothing to do). A stopped chain with
// steps left stays stopped.
func endsDone(state string, step, nSteps int) bool {
	return (state == "running" || state == "stopped") && step+1 >= nSteps
}

// FailChain marks a chain failed with a reason; with step >= 0 that step is
// marked failed too. A chain already done or purged keeps its state.
func (d *DB) FailChain(ctx context.Context, chainID int64, step int, reason string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		if step >= 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'failed', finished = ? WHERE chain_id = ? AND step = ? AND state != 'done'`, now(), chainID, step); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE chains SET state = 'failed', error = ?, updated = ? WHERE id = ? AND state IN ('running', 'stopped')`, reason, now(), chainID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		c, err := chainByID(ctx, tx, chainID)
		if err != nil {
			return err
		}
		if err := addEvent(ctx, tx, c, EvChainFailed, step, reason); err != nil {
			return err
		}
		return groupDoneEvent(ctx, tx, c)
	})
}

// chainByID reads a chain inside a transaction.
func chainByID(ctx context.Context, tx *sql.Tx, id int64) (Chain, error) {
	c, err := scanChain(tx.QueryRowContext(ctx, `SELECT `+chainCols+` FROM chains c JOIN users u ON u.id = c.user_id WHERE c.id = ?`, id))
	if err != nil {
		return c, fmt.Errorf("reading chain %d: %w", id, err)
	}
	c.User = strings.ToUpper(c.User)
	return c, nil
}

// Chains lists a user's chains (not purged) in a group, or one chain, or
// with an empty group all of them; sorted by group and name.
func (d *DB) Chains(ctx context.Context, userID int64, group, name string) ([]Chain, error) {
	q := `SELECT ` + chainCols + ` FROM chains c JOIN users u ON u.id = c.user_id WHERE c.user_id = ? AND c.state != 'purged'`
	args := []any{userID}
	if group != "" {
		q += ` AND c.grp = ?`
		args = append(args, group)
	}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	q += ` ORDER BY c.grp, c.name`
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanChains(rows)
}

// Stop marks running chains of a group (or one chain) stopped: their next
// steps are not created. It returns how many chains it stopped.
func (d *DB) Stop(ctx context.Context, userID int64, group, name, reason string) (int, error) {
	cs, err := d.setState(ctx, userID, group, name, []string{"running"}, "stopped", EvChainStopped, reason)
	return len(cs), err
}

// setState moves a user's chains of a group (or one) in one of the states
// from to state to, with an event each, and returns them (as they were).
func (d *DB) setState(ctx context.Context, userID int64, group, name string, from []string, to, event, reason string) ([]Chain, error) {
	var moved []Chain
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if moved, err = chainsIn(ctx, tx, userID, group, name, from); err != nil {
			return err
		}
		for _, c := range moved {
			if _, err := tx.ExecContext(ctx, `UPDATE chains SET state = ?, error = ?, updated = ? WHERE id = ?`, to, reason, now(), c.ID); err != nil {
				return err
			}
			if err := addEvent(ctx, tx, c, event, c.StepsDone, reason); err != nil {
				return err
			}
		}
		if len(moved) > 0 && to != "running" {
			return groupDoneEvent(ctx, tx, moved[0])
		}
		return nil
	})
	return moved, err
}

// chainsIn reads, in a transaction, a user's chains of a group (or one)
// in one of the states.
func chainsIn(ctx context.Context, tx *sql.Tx, userID int64, group, name string, states []string) ([]Chain, error) {
	q := `SELECT ` + chainCols + ` FROM chains c JOIN users u ON u.id = c.user_id WHERE c.user_id = ? AND c.grp = ? AND c.state IN ` + inList(len(states))
	args := []any{userID, group}
	for _, st := range states {
		args = append(args, st)
	}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanChains(rows)
}

// scanStrings reads a one-column result.
func scanStrings(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func inList(n int) string { return "(?" + strings.Repeat(",?", n-1) + ")" }

// anyOpen tells whether one of chains keeps its group from being finished
// (see groupDoneEvent): it runs, or it is stopped with a step in BOINC
// or pending.
func anyOpen(ctx context.Context, tx *sql.Tx, chains []Chain) (bool, error) {
	for _, c := range chains {
		switch c.State {
		case "running":
			return true, nil
		case "stopped":
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM steps WHERE chain_id = ? AND state IN ('queued', 'creating', 'pending'))`, c.ID).Scan(&n); err != nil {
				return false, err
			}
			if n != 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// scanChains reads every chain of rows (closing them), the user's name in
// capitals as work-unit names carry it.
func scanChains(rows *sql.Rows) ([]Chain, error) {
	defer rows.Close()
	var out []Chain
	for rows.Next() {
		c, err := scanChain(rows)
		if err != nil {
			return nil, err
		}
		c.User = strings.ToUpper(c.User)
		out = append(out, c)
	}
	return out, rows.Err()
}

// StepStates are the states of the steps of work units wus and of their
// chains, by work-unit name (names of no step are left out), read in one
// query: the native assimilator asks it for a batch before taking the
// outputs of those that still wait for them.
func (d *DB) StepStates(ctx context.Context, wus []string) (map[string]StepState, error) {
	out := make(map[string]StepState, len(wus))
	for start := 0; start < len(wus); start += maxListArgs {
		part := wus[start:min(start+maxListArgs, len(wus))]
		rows, err := d.sql.QueryContext(ctx, `SELECT s.wu_name, s.state, c.state FROM steps s JOIN chains c ON c.id = s.chain_id
			WHERE s.wu_name IN `+inList(len(part)), anys(part)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var wu string
			var st StepState
			if err := rows.Scan(&wu, &st.Step, &st.Chain); err != nil {
				rows.Close()
				return nil, err
			}
			out[wu] = st
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// StepState is a step's state and its chain's.
type StepState struct{ Step, Chain string }

// maxListArgs bounds the names of one IN list (SQLite's default limit on
// a statement's parameters is far above it).
const maxListArgs = 500
