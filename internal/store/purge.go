package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A purge goes in pieces, each a transaction of its own over whole chains:
// a group of 250 chains of 100 steps is some 100,000 rows (results, step
// inputs, steps) to delete, and one transaction for all of them held the
// state's write lock, which every submission, advance and control waits
// for, for seconds on an idle MariaDB and minutes on a loaded one. Between
// pieces the others get their turn. A purge cut short (kill -9, a lost
// connection) left whole chains purged and whole chains not: the same
// purge run again finishes it.
const (
	// purgePieceSteps bounds the steps of the chains one piece purges
	// (a chain's rows follow its steps); a longer chain is a piece alone.
	purgePieceSteps = 2000
	// purgePieceChains bounds the chains one piece reads.
	purgePieceChains = 100
)

// Purge marks a group's chains (or one chain) purged, forgets their inputs
// and pending results, and returns the purged chains and the result files
// (<wu>_<k>) that were still on the server, for the caller to delete.
func (d *DB) Purge(ctx context.Context, userID int64, group, name string) ([]Chain, []string, error) {
	return d.PurgeEach(ctx, userID, group, name, nil)
}

// PurgeEach is Purge calling each, when not nil, after each piece's commit
// with the chains it purged and their result files, so that the files of
// what is committed go at once. On an error the chains and files of the
// pieces committed before it are returned with it.
func (d *DB) PurgeEach(ctx context.Context, userID int64, group, name string, each func(chains []Chain, files []string)) ([]Chain, []string, error) {
	var all []Chain
	var allFiles []string
	for {
		var chains []Chain
		var files []string
		err := d.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			chains, files, err = purgePiece(ctx, tx, userID, group, name)
			return err
		})
		if err != nil {
			return all, allFiles, err
		}
		if len(chains) == 0 {
			return all, allFiles, nil
		}
		all, allFiles = append(all, chains...), append(allFiles, files...)
		if each != nil {
			each(chains, files)
		}
	}
}

// purgePiece purges, in tx, the next chains of a purge (none once it is
// done). Each piece that purges a chain keeping the group from being
// finished (see anyOpen) checks for group_done: the piece that purges
// the last of them adds it, once, also when a purge cut short is run
// again (the rest then holds such a chain).
func purgePiece(ctx context.Context, tx *sql.Tx, userID int64, group, name string) ([]Chain, []string, error) {
	q := `SELECT ` + chainCols + ` FROM chains c JOIN users u ON u.id = c.user_id WHERE c.user_id = ? AND c.grp = ? AND c.state != 'purged'`
	args := []any{userID, group}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	// No ORDER BY: ordered by id, MariaDB walked the primary key through
	// every user's chains (3,000 rows read to purge one chain) instead of
	// the index of the user's group; any order purges them all.
	q += ` LIMIT ?`
	args = append(args, purgePieceChains)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	var chains []Chain
	steps := 0
	for rows.Next() {
		c, err := scanChain(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		steps += c.StepsDone + 1
		if len(chains) > 0 && steps > purgePieceSteps {
			break
		}
		chains = append(chains, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	open, err := anyOpen(ctx, tx, chains)
	if err != nil {
		return nil, nil, err
	}
	if len(chains) == 0 {
		return nil, nil, nil
	}
	// Set-based, by the chains' ids (indexed in each table): a few
	// statements a piece, not six a chain.
	ids := make([]any, len(chains))
	for i, c := range chains {
		ids[i] = c.ID
	}
	in := inList(len(ids))
	files, err := column(ctx, tx, `DELETE FROM results WHERE chain_id IN `+in+` RETURNING file`, ids...)
	if err != nil {
		return nil, nil, err
	}
	// What reads step_inputs goes too, but for the steps BOINC may still
	// hold (their inputs stay staged until they end: CompleteStepPooling
	// forgets them then). A held step never reached BOINC: nothing will
	// ask for it again. The other steps stay, so that BOINC's late
	// outputs of a purged chain are known as such, until collection
	// forgets them once ended (ForgetPurgedSteps; docs/operations.md,
	// What a purge leaves).
	if err := deleteStepInputsWhere(ctx, tx, `chain_id IN `+in+` AND state NOT IN ('creating', 'pending', 'queued')`, ids...); err != nil {
		return nil, nil, err
	}
	for _, q := range []string{
		`DELETE FROM chain_inputs WHERE chain_id IN ` + in,
		`DELETE FROM steps WHERE chain_id IN ` + in + ` AND state = 'held'`,
		`UPDATE chains SET state = 'purged', updated = ` + fmt.Sprint(now()) + ` WHERE id IN ` + in,
	} {
		if _, err := tx.ExecContext(ctx, q, ids...); err != nil {
			return nil, nil, err
		}
	}
	if open {
		// A purged chain held the group's group_done back (it ran, or
		// was stopped with a step in BOINC): nothing more comes of it.
		return chains, files, groupDoneEvent(ctx, tx, chains[0])
	}
	return chains, files, nil
}
