package store

import (
	"context"
	"database/sql"
	"strings"
)

// PendingResult is a result file not yet acknowledged, with its chain.
type PendingResult struct {
	Result
	Group  string
	Chain  string
	Queue  string
	User   string
	Layout string
}

// PendingResults lists unacknowledged result files of a user's group (or
// one chain), sorted by chain, step and output index, whoever their
// consumer (the status pages show them all).
func (d *DB) PendingResults(ctx context.Context, userID int64, group, name string) ([]PendingResult, error) {
	return d.pendingResults(ctx, userID, group, name, nil)
}

// PendingResultsOf is PendingResults of the chains whose results go to
// consumer only.
func (d *DB) PendingResultsOf(ctx context.Context, userID int64, consumer, group, name string) ([]PendingResult, error) {
	return d.pendingResults(ctx, userID, group, name, &consumer)
}

func (d *DB) pendingResults(ctx context.Context, userID int64, group, name string, consumer *string) ([]PendingResult, error) {
	q := `SELECT r.chain_id, r.step, r.idx, r.file, r.md5, r.size, c.grp, c.name, c.queue, u.name, c.layout
		FROM results r JOIN chains c ON c.id = r.chain_id JOIN users u ON u.id = c.user_id
		WHERE c.user_id = ? AND c.grp = ? AND c.state != 'purged'`
	args := []any{userID, group}
	if consumer != nil {
		q += ` AND c.consumer = ?`
		args = append(args, *consumer)
	}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	q += ` ORDER BY c.name, r.step, r.idx`
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PendingResult
	for rows.Next() {
		var p PendingResult
		if err := rows.Scan(&p.ChainID, &p.Step, &p.Index, &p.File, &p.MD5, &p.Size, &p.Group, &p.Chain, &p.Queue, &p.User, &p.Layout); err != nil {
			return nil, err
		}
		p.User = strings.ToUpper(p.User)
		out = append(out, p)
	}
	return out, rows.Err()
}

// PendingResult finds one unacknowledged result file of a user's group
// whose results go to consumer.
func (d *DB) PendingResult(ctx context.Context, userID int64, consumer, group, file string) (PendingResult, error) {
	var p PendingResult
	err := d.queryRow(ctx, `SELECT r.chain_id, r.step, r.idx, r.file, r.md5, r.size, c.grp, c.name, c.queue, u.name
		FROM results r JOIN chains c ON c.id = r.chain_id JOIN users u ON u.id = c.user_id
		WHERE c.user_id = ? AND c.grp = ? AND r.file = ? AND c.state != 'purged' AND c.consumer = ?`, userID, group, file, consumer).
		Scan(&p.ChainID, &p.Step, &p.Index, &p.File, &p.MD5, &p.Size, &p.Group, &p.Chain, &p.Queue, &p.User)
	if err == sql.ErrNoRows {
		return p, ErrNotFound
	}
	p.User = strings.ToUpper(p.User)
	return p, err
}

// Ack forgets the named result files of a user's group whose results go
// to consumer and returns the names it forgot (those that existed), for
// the caller to delete.
func (d *DB) Ack(ctx context.Context, userID int64, consumer, group string, files []string) ([]string, error) {
	var gone []string
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		gone = gone[:0]
		st := newStmtCache(tx)
		defer st.Close()
		for _, f := range files {
			// EXISTS, not IN (SELECT ...): IN would list the whole group's
			// chains for every file.
			rows, err := st.QueryContext(ctx, `DELETE FROM results WHERE file = ? AND EXISTS
				(SELECT 1 FROM chains c WHERE c.id = results.chain_id AND c.user_id = ? AND c.grp = ? AND c.consumer = ?) RETURNING file`, f, userID, group, consumer)
			if err != nil {
				return err
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					rows.Close()
					return err
				}
				gone = append(gone, name)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	return gone, err
}
