package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A batch (see Batch) records the finished steps of hundreds of chains. One
// step's record, done a statement at a time, is about a dozen statements
// (its lookup, a savepoint, the pool, the results, the step, the chain, an
// event, the next step and its inputs): most of a native assimilator's
// pass. In a batch the records of the common case (the chain runs on to a
// next step) are therefore gathered and written with one multi-row
// statement per table (flushSteps), and the steps they complete are read
// with a few statements for the whole batch (ReadAhead).
//
// What is gathered is written before any other statement of the batch runs
// (savepoint, StepByWU's miss) and before the commit, so every other
// record sees the batch as if each had been written at once, and the
// batch stays one transaction: all of it is recorded, or nothing.

// readStep is a step the batch read ahead, with its chain, as they stand
// in the batch's transaction.
type readStep struct {
	c Chain
	s Step
}

// stepBatch is what a batch read ahead and what it gathered to write.
type stepBatch struct {
	// ahead holds the steps read ahead by work-unit name; byChain the
	// names of each chain's. A step is handed out once: the record that
	// takes it may change its chain.
	ahead   map[string]readStep
	byChain map[int64][]string
	// fresh is the step handed out last by StepByWU, when no statement
	// has changed its chain since: CompleteStepPooling may gather its
	// record instead of reading its state again.
	fresh map[int64]readStep
	// gathered records, in the order they were made.
	pooled  map[int64][]PoolEntry // by user
	results []any                 // rows of results
	done    []doneStep
	events  []any       // rows of events
	next    []Step      // next steps, pending or held
	ended   []any       // chains done
	groups  []userGroup // groups of the chains done
}

// userGroup is one user's group of chains.
type userGroup struct {
	userID int64
	group  string
}

// doneStep is a step marked done and its chain's progress, at time t.
type doneStep struct {
	chainID int64
	step    int
	t       int64
}

// ReadAhead reads, in a few statements, the steps of work units wus and
// their chains, for the records of the batch ctx belongs to: StepByWU then
// answers from what it read. Outside a batch it does nothing. Names that
// are no step are left to StepByWU.
func (d *DB) ReadAhead(ctx context.Context, wus []string) error {
	b, ok := ctx.Value(batchKey{}).(*batch)
	if !ok || b.db != d || b.lost != nil || len(wus) == 0 {
		return nil
	}
	if err := b.flushSteps(ctx); err != nil {
		return err
	}
	sb := b.steps()
	read := map[string]readStep{}
	for part := range slices.Chunk(slices.Compact(slices.Sorted(slices.Values(wus))), 400) {
		in := `(?` + strings.Repeat(",?", len(part)-1) + `)`
		rows, err := b.stmts.QueryContext(ctx, `SELECT `+chainCols+`, s.wu_name, s.step, s.state, s.attempts FROM steps s
			JOIN chains c ON c.id = s.chain_id JOIN users u ON u.id = c.user_id WHERE s.wu_name IN `+in, anys(part)...)
		if err != nil {
			return fmt.Errorf("reading the batch's steps: %w", err)
		}
		for rows.Next() {
			var r readStep
			c := &r.c
			if err := rows.Scan(&c.ID, &c.UserID, &c.User, &c.Group, &c.Name, &c.Queue, &c.App, &c.Tag, &c.NSteps, &c.Priority, &c.Params,
				&c.WUTmpl, &c.ResTmpl, &c.Layout, &c.State, &c.StepsDone, &c.Error, &c.MaxAttempts, &c.Args, &c.Consumer,
				&r.s.WU, &r.s.Step, &r.s.State, &r.s.Attempts); err != nil {
				rows.Close()
				return fmt.Errorf("reading the batch's steps: %w", err)
			}
			c.User = strings.ToUpper(c.User)
			r.s.ChainID = c.ID
			read[r.s.WU] = r
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("reading the batch's steps: %w", err)
		}
		// A step's inputs: its own rows, or for a step 0 recorded with its
		// chain (which has none) the chain's (see stepInputs).
		rows, err = b.stmts.QueryContext(ctx, `SELECT wu_name, pos, md5 FROM step_inputs WHERE wu_name IN `+in+` ORDER BY wu_name, pos`, anys(part)...)
		if err != nil {
			return fmt.Errorf("reading the batch's step inputs: %w", err)
		}
		own := map[string]bool{}
		for rows.Next() {
			var wu, md5 string
			var pos int
			if err := rows.Scan(&wu, &pos, &md5); err != nil {
				rows.Close()
				return fmt.Errorf("reading the batch's step inputs: %w", err)
			}
			if r, ok := read[wu]; ok {
				r.s.Inputs = append(r.s.Inputs, md5)
				read[wu] = r
			}
			own[wu] = true
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("reading the batch's step inputs: %w", err)
		}
		var firsts []any
		zero := map[int64]string{}
		for _, wu := range part {
			if r, ok := read[wu]; ok && r.s.Step == 0 && !own[wu] {
				firsts = append(firsts, r.c.ID)
				zero[r.c.ID] = wu
			}
		}
		if len(firsts) == 0 {
			continue
		}
		rows, err = b.stmts.QueryContext(ctx, `SELECT chain_id, pos, md5 FROM chain_inputs WHERE chain_id IN (?`+strings.Repeat(",?", len(firsts)-1)+`) ORDER BY chain_id, pos`, firsts...)
		if err != nil {
			return fmt.Errorf("reading the batch's chain inputs: %w", err)
		}
		for rows.Next() {
			var id int64
			var md5 string
			var pos int
			if err := rows.Scan(&id, &pos, &md5); err != nil {
				rows.Close()
				return fmt.Errorf("reading the batch's chain inputs: %w", err)
			}
			wu := zero[id]
			r := read[wu]
			r.s.Inputs = append(r.s.Inputs, md5)
			read[wu] = r
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("reading the batch's chain inputs: %w", err)
		}
	}
	for wu, r := range read {
		sb.ahead[wu] = r
		sb.byChain[r.c.ID] = append(sb.byChain[r.c.ID], wu)
	}
	return nil
}

// steps is the batch's stepBatch, made on first use.
func (b *batch) steps() *stepBatch {
	if b.sb == nil {
		b.sb = &stepBatch{ahead: map[string]readStep{}, byChain: map[int64][]string{}, fresh: map[int64]readStep{},
			pooled: map[int64][]PoolEntry{}}
	}
	return b.sb
}

// takeAhead hands out the step of work unit wu read ahead, if it was: once,
// and then no other step of its chain, whose record this one may change.
func (b *batch) takeAhead(wu string) (readStep, bool) {
	if b.sb == nil {
		return readStep{}, false
	}
	r, ok := b.sb.ahead[wu]
	if !ok {
		return r, false
	}
	for _, name := range b.sb.byChain[r.c.ID] {
		delete(b.sb.ahead, name)
	}
	delete(b.sb.byChain, r.c.ID)
	// Records run one after another: only the step handed out last may
	// be recorded without reading its state again.
	clear(b.sb.fresh)
	b.sb.fresh[r.c.ID] = r
	return r, true
}

// forgetAhead drops what was read ahead: a statement about to run may
// change it.
func (b *batch) forgetAhead() {
	if b.sb != nil {
		clear(b.sb.ahead)
		clear(b.sb.byChain)
		clear(b.sb.fresh)
	}
}

// gatherStep is CompleteStepPooling's common cases in a batch, gathered
// for flushSteps: the step was handed out fresh by StepByWU, is not done,
// its chain runs, and either runs on to the next step or ends with this
// one (as does a chain stopped during its last step: see endsDone). ok is false otherwise (the caller records it statement by
// statement); state is the chain's state after the record.
func (b *batch) gatherStep(c Chain, step int, results []Result, pooled []PoolEntry, next *Step) (state string, ok bool) {
	if b.sb == nil || b.lost != nil {
		return "", false
	}
	r, fresh := b.sb.fresh[c.ID]
	if !fresh || r.s.Step != step || r.s.State == "done" || r.s.State == "failed" {
		return "", false
	}
	if r.c.State != "running" && !endsDone(r.c.State, step, r.c.NSteps) {
		return "", false
	}
	goOn := r.c.State == "running" && step+1 < r.c.NSteps
	if goOn && next == nil {
		return "", false // a missing chained output: the caller fails the chain
	}
	delete(b.sb.fresh, c.ID)
	sb := b.sb
	sb.pooled[c.UserID] = append(sb.pooled[c.UserID], pooled...)
	for _, res := range results {
		sb.results = append(sb.results, c.ID, res.Step, res.Index, res.File, res.MD5, res.Size)
	}
	t := now()
	sb.done = append(sb.done, doneStep{chainID: c.ID, step: step, t: t})
	sb.events = append(sb.events, t, c.UserID, EvStepDone, c.Group, c.Name, step, "")
	if next != nil {
		n := *next
		if !goOn {
			n.State = StateHeld // for -extend
		}
		sb.next = append(sb.next, n)
	}
	if goOn {
		return "running", true
	}
	sb.ended = append(sb.ended, c.ID)
	sb.events = append(sb.events, t, c.UserID, EvChainDone, c.Group, c.Name, step, "")
	g := userGroup{c.UserID, c.Group}
	if !slices.Contains(sb.groups, g) {
		sb.groups = append(sb.groups, g)
	}
	return "done", true
}

// flushSteps writes the gathered records, a statement per table and
// chunk, in the order CompleteStepPooling writes one record's.
func (b *batch) flushSteps(ctx context.Context) error {
	sb := b.sb
	if sb == nil || len(sb.done) == 0 && len(sb.pooled) == 0 {
		return nil
	}
	err := sb.write(ctx, b.stmts)
	sb.pooled, sb.results, sb.done, sb.events, sb.next, sb.ended, sb.groups = map[int64][]PoolEntry{}, nil, nil, nil, nil, nil, nil
	if err != nil {
		// Records the batch's caller counts as made are not: the batch
		// must not commit.
		b.lost = fmt.Errorf("state database: writing the batch's step records: %w", err)
		return b.lost
	}
	return nil
}

func (sb *stepBatch) write(ctx context.Context, ex *stmtCache) error {
	for _, user := range slices.Sorted(maps.Keys(sb.pooled)) {
		entries := sb.pooled[user]
		if err := poolUpsertRows(ctx, ex, entries); err != nil {
			return err
		}
		if err := ownRows(ctx, ex, user, entrySums(entries)); err != nil {
			return err
		}
	}
	if err := insertValues(ctx, ex, `INSERT OR IGNORE INTO results(chain_id, step, idx, file, md5, size) VALUES `, 6, sb.results); err != nil {
		return err
	}
	// The steps and chains by (step, time): in a batch most share both.
	type key struct {
		step int
		t    int64
	}
	var keys []key
	ids := map[key][]any{}
	for _, d := range sb.done {
		k := key{d.step, d.t}
		if _, ok := ids[k]; !ok {
			keys = append(keys, k)
		}
		ids[k] = append(ids[k], d.chainID)
	}
	for _, k := range keys {
		for part := range slices.Chunk(ids[k], 400) {
			in := `(?` + strings.Repeat(",?", len(part)-1) + `)`
			if _, err := ex.ExecContext(ctx, `UPDATE steps SET state = 'done', finished = ? WHERE step = ? AND chain_id IN `+in, append([]any{k.t, k.step}, part...)...); err != nil {
				return err
			}
			if _, err := ex.ExecContext(ctx, `UPDATE chains SET steps_done = max(steps_done, ?), updated = ? WHERE id IN `+in, append([]any{k.step + 1, k.t}, part...)...); err != nil {
				return err
			}
		}
	}
	for part := range slices.Chunk(sb.ended, 400) {
		if _, err := ex.ExecContext(ctx, `UPDATE chains SET state = 'done', error = '' WHERE id IN (?`+strings.Repeat(",?", len(part)-1)+`)`, part...); err != nil {
			return err
		}
	}
	if err := insertValues(ctx, ex, `INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES `, 7, sb.events); err != nil {
		return fmt.Errorf("recording the batch's step_done and chain_done events: %w", err)
	}
	if err := insertSteps(ctx, ex, sb.next); err != nil {
		return err
	}
	for _, g := range sb.groups {
		if err := groupDoneEvent(ctx, ex, Chain{UserID: g.userID, Group: g.group}); err != nil {
			return err
		}
	}
	return nil
}

// insertSteps is insertStep for many steps, a statement per table and
// chunk.
func insertSteps(ctx context.Context, ex execer, steps []Step) error {
	t := now()
	rows := make([]any, 0, 5*len(steps))
	var inputs []any
	for _, s := range steps {
		rows = append(rows, s.ChainID, s.Step, s.WU, s.State, t)
		for pos, m := range s.Inputs {
			inputs = append(inputs, s.WU, pos, m)
		}
	}
	if err := insertValues(ctx, ex, `INSERT INTO steps(chain_id, step, wu_name, state, created) VALUES `, 5, rows); err != nil {
		if isUnique(err) {
			return fmt.Errorf("next steps of the batch: a work unit name is taken: %w", ErrExists)
		}
		return err
	}
	return insertValues(ctx, ex, `INSERT INTO step_inputs(wu_name, pos, md5) VALUES `, 3, inputs)
}

// poolUpsertRows is poolUpsert with one statement per chunk; a content
// listed twice is written once.
func poolUpsertRows(ctx context.Context, ex execer, entries []PoolEntry) error {
	t := now()
	seen := map[string]bool{}
	args := make([]any, 0, 3*len(entries))
	for _, e := range entries {
		if !seen[e.MD5] {
			seen[e.MD5] = true
			args = append(args, e.MD5, e.Size, t)
		}
	}
	per := maxParams / 3 * 3
	for len(args) > 0 {
		n := min(len(args), per)
		if _, err := ex.ExecContext(ctx, `INSERT INTO pool(md5, size, touched) VALUES `+valueRows(n/3, 3)+
			` ON CONFLICT(md5) DO UPDATE SET touched = excluded.touched`, args[:n]...); err != nil {
			return err
		}
		args = args[n:]
	}
	return nil
}

// stepAhead answers StepByWU in a batch from what ReadAhead read.
func (d *DB) stepAhead(ctx context.Context, wu string) (Chain, Step, bool) {
	b, ok := ctx.Value(batchKey{}).(*batch)
	if !ok || b.db != d {
		return Chain{}, Step{}, false
	}
	r, ok := b.takeAhead(wu)
	return r.c, r.s, ok
}
