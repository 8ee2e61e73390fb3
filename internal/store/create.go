package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/words"
)

// createBatch is how many chains one INSERT of each table carries: a
// statement per row was most of the time of recording a submission.
const createBatch = 64

// maxParams keeps a statement well under SQLite's bound on parameters.
const maxParams = 30000

// CreateChainsEach is CreateChainsWithin that calls each, when not nil,
// inside the transaction once chain i is inserted (its tag, and so its
// work-unit names, known). An error from each undoes everything.
func (d *DB) CreateChainsEach(ctx context.Context, u User, chains []NewChain, maxRunning int, each func(i int, c Chain) error) ([]Chain, error) {
	return d.CreateChainsPooling(ctx, u, chains, Quota{MaxRunning: maxRunning}, each, nil)
}

// Quota is what a submission's transaction enforces, 0 meaning no limit.
// Checked under the database's write lock, after the chains are inserted,
// the check and the reservation are one step: two submissions checked at
// the same moment cannot pass a limit together.
type Quota struct {
	MaxRunning   int   // the user's chains in progress
	MaxPoolBytes int64 // pooled contents the user's chains (not purged) refer to, each once
}

// CreateChainsPooling is CreateChainsEach that also records in the pool's
// index, in the same transaction, the contents that pooled (when not nil)
// returns once every chain is inserted and each has returned for the last
// one: contents written into the pool for these very chains, which then
// enter the index together with the chains that use them.
func (d *DB) CreateChainsPooling(ctx context.Context, u User, chains []NewChain, q Quota, each func(i int, c Chain) error, pooled func() []PoolEntry) ([]Chain, error) {
	out := make([]Chain, 0, len(chains))
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		st := newStmtCache(tx)
		defer st.Close()
		if maxRunning := q.MaxRunning; maxRunning > 0 {
			var running int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chains WHERE user_id = ? AND state = 'running'`, u.ID).Scan(&running); err != nil {
				return err
			}
			if running+len(chains) > maxRunning {
				return fmt.Errorf("you have %s in progress and this submission adds %d; the limit is %d: %w", words.Count(running, "chain", "chains"), len(chains), maxRunning, ErrQuota)
			}
		}
		seen := map[[2]string]bool{}
		for _, nc := range chains {
			k := [2]string{nc.Group, nc.Name}
			if seen[k] {
				return fmt.Errorf("chain %s in group %s appears twice: %w", nc.Name, nc.Group, ErrExists)
			}
			seen[k] = true
		}
		if err := checkConsumers(ctx, st, u.ID, chains); err != nil {
			return err
		}
		owner, err := d.takeLease(ctx, st)
		if err != nil {
			return err
		}
		for start := 0; start < len(chains); start += createBatch {
			batch := chains[start:min(start+createBatch, len(chains))]
			cs, err := insertChains(ctx, st, u, batch, owner)
			if err != nil {
				return err
			}
			for i, c := range cs {
				if each != nil {
					if err := each(start+i, c); err != nil {
						return err
					}
				}
				out = append(out, c)
			}
		}
		if pooled != nil {
			if err := poolUpsert(ctx, st, pooled()); err != nil {
				return err
			}
		}
		if q.MaxPoolBytes > 0 {
			return checkPoolBytes(ctx, tx, u.ID, q.MaxPoolBytes)
		}
		return nil
	})
	return out, err
}

// checkPoolBytes refuses, inside the transaction that has just recorded a
// submission, when the user's chains now refer to more pooled bytes than
// max. The whole pool's size bounds the user's share: only above max is the
// exact figure measured.
func checkPoolBytes(ctx context.Context, tx *sql.Tx, userID, max int64) error {
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM pool`).Scan(&total); err != nil {
		return fmt.Errorf("measuring the pool: %w", err)
	}
	if total <= max {
		return nil
	}
	used, err := poolBytesOf(ctx, tx, userID)
	if err != nil {
		return err
	}
	if used > max {
		return fmt.Errorf("with this submission your chains would refer to %d bytes of input on the server; the limit is %d bytes: purge groups you have retrieved to free space: %w", used, max, ErrQuota)
	}
	return nil
}

// insertChains inserts a batch of chains with their inputs and their step
// 0 (state "creating", owned by the process lease owner: see
// ReviveCreating), a statement per table. Step 0 reads the chain's
// inputs: they are stored once, in chain_inputs (stepInputs and the pool's
// queries read them there), not again in step_inputs, which held a third of
// a submission's B-tree insertions.
func insertChains(ctx context.Context, st *stmtCache, u User, batch []NewChain, owner string) ([]Chain, error) {
	t := now()
	cs := make([]Chain, len(batch))
	args := make([]any, 0, 19*len(batch))
	used, err := usedTags(ctx, st, u.ID, batch)
	if err != nil {
		return nil, err
	}
	for i, nc := range batch {
		c := nc.Chain
		c.UserID, c.User, c.State = u.ID, strings.ToUpper(u.Name), "running"
		tags := used[[2]string{c.Group, c.Name}]
		if len(tags) >= 9000 {
			return nil, fmt.Errorf("chain %s in group %s was resubmitted too often: no tag left", c.Name, c.Group)
		}
		for c.Tag == "" || tags[c.Tag] {
			c.Tag = naming.Tag(rand.IntN(10000))
		}
		cs[i] = c
		args = append(args, u.ID, c.Group, c.Name, c.Queue, c.App, c.Tag, c.NSteps, c.Priority, c.Params, c.WUTmpl, c.ResTmpl, c.Layout, c.State, t, t, c.Digest, c.MaxAttempts, c.Args, c.Consumer)
	}
	// RETURNING gives the rows in no promised order: match them by name
	// (and group), unique among live chains.
	rows, err := st.QueryContext(ctx, `INSERT INTO chains(user_id, grp, name, queue, app, tag, nsteps, priority, params, wu_tmpl, res_tmpl, layout, state, created, updated, digest, max_attempts, args, consumer)
		VALUES `+valueRows(len(batch), 19)+` RETURNING id, grp, name`, args...)
	if err != nil {
		return nil, chainsTaken(ctx, st, u, cs, err)
	}
	ids := map[[2]string]int64{}
	for rows.Next() {
		var id int64
		var grp, name string
		if err := rows.Scan(&id, &grp, &name); err != nil {
			rows.Close()
			return nil, err
		}
		ids[[2]string{grp, name}] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, chainsTaken(ctx, st, u, cs, err)
	}
	var inputs, steps []any
	var owns []string // contents the user now owns
	for i := range cs {
		c := &cs[i]
		id, ok := ids[[2]string{c.Group, c.Name}]
		if !ok {
			return nil, fmt.Errorf("recording chain %s: the database returned no id for it", c.Name)
		}
		c.ID = id
		wu := c.WU(0)
		steps = append(steps, c.ID, 0, wu, "creating", t, owner)
		for pos, m := range batch[i].Inputs {
			inputs = append(inputs, c.ID, pos, m)
			owns = append(owns, m)
		}
	}
	if err := insertValues(ctx, st, `INSERT INTO chain_inputs(chain_id, pos, md5) VALUES `, 3, inputs); err != nil {
		return nil, err
	}
	if err := insertValues(ctx, st, `INSERT INTO steps(chain_id, step, wu_name, state, created, owner) VALUES `, 6, steps); err != nil {
		if isUnique(err) {
			return nil, fmt.Errorf("a work unit of chains %s to %s: %w", cs[0].Name, cs[len(cs)-1].Name, ErrExists)
		}
		return nil, err
	}
	if err := ownRows(ctx, st, u.ID, owns); err != nil {
		return nil, err
	}
	return cs, nil
}

// usedTags returns the tags each chain name of the batch had before (purged
// chains included), with one query: a new chain gets a tag none of them
// had, so its work-unit names were never used.
func usedTags(ctx context.Context, q querier, uid int64, batch []NewChain) (map[[2]string]map[string]bool, error) {
	args := make([]any, 0, 2*len(batch)+1)
	args = append(args, uid)
	for _, nc := range batch {
		args = append(args, nc.Group, nc.Name)
	}
	rows, err := q.QueryContext(ctx, `SELECT grp, name, tag FROM chains WHERE user_id = ? AND (grp, name) IN (VALUES `+valueRows(len(batch), 2)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	used := map[[2]string]map[string]bool{}
	for rows.Next() {
		var grp, name, tag string
		if err := rows.Scan(&grp, &name, &tag); err != nil {
			return nil, err
		}
		k := [2]string{grp, name}
		if used[k] == nil {
			used[k] = map[string]bool{}
		}
		used[k][tag] = true
	}
	return used, rows.Err()
}

// insertValues runs prefix with as many rows of k values as args holds,
// in as few statements as the bound on parameters allows.
func insertValues(ctx context.Context, ex execer, prefix string, k int, args []any) error {
	per := maxParams / k * k
	for len(args) > 0 {
		n := min(len(args), per)
		if _, err := ex.ExecContext(ctx, prefix+valueRows(n/k, k), args[:n]...); err != nil {
			return err
		}
		args = args[n:]
	}
	return nil
}

// chainsTaken words a failed insert of a batch: a name already in use
// (the unique index on live chains) is named; anything else is returned.
func chainsTaken(ctx context.Context, q querier, u User, cs []Chain, err error) error {
	if !isUnique(err) {
		return err
	}
	for _, c := range cs {
		rows, qerr := q.QueryContext(ctx, `SELECT 1 FROM chains WHERE user_id = ? AND grp = ? AND name = ? AND state != 'purged'`, u.ID, c.Group, c.Name)
		if qerr != nil {
			return err
		}
		taken := rows.Next()
		rows.Close()
		if taken {
			return fmt.Errorf("chain %s in group %s: %w", c.Name, c.Group, ErrExists)
		}
	}
	return fmt.Errorf("chains %s to %s: %w", cs[0].Name, cs[len(cs)-1].Name, ErrExists)
}
