package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// bulkChunk is how many file names one query of PendingResultsNamed
// carries (within every engine's limit on placeholders).
const bulkChunk = 500

// PendingResultsNamed is PendingResult for many files of one group at
// once: those of files that are the user's, waiting and go to consumer,
// in the order of files (a name given twice comes once). A name that
// matches nothing is left out. It takes a query per bulkChunk names
// instead of one per file.
func (d *DB) PendingResultsNamed(ctx context.Context, userID int64, consumer, group string, files []string) ([]PendingResult, error) {
	found := make(map[string]PendingResult, len(files))
	for part := range slices.Chunk(files, bulkChunk) {
		q := `SELECT r.chain_id, r.step, r.idx, r.file, r.md5, r.size, c.grp, c.name, c.queue, u.name
			FROM results r JOIN chains c ON c.id = r.chain_id JOIN users u ON u.id = c.user_id
			WHERE r.file IN ` + inList(len(part)) + ` AND c.user_id = ? AND c.grp = ? AND c.state != 'purged' AND c.consumer = ?`
		args := make([]any, 0, len(part)+3)
		for _, f := range part {
			args = append(args, f)
		}
		args = append(args, userID, group, consumer)
		if err := d.scanPending(ctx, q, args, func(p PendingResult) { found[p.File] = p }); err != nil {
			return nil, err
		}
	}
	out := make([]PendingResult, 0, len(found))
	for _, f := range files {
		if p, ok := found[f]; ok {
			out = append(out, p)
			delete(found, f)
		}
	}
	return out, nil
}

// PendingResultsFirst is PendingResultsOf limited to its first limit
// files (the next ones a retrieval takes).
func (d *DB) PendingResultsFirst(ctx context.Context, userID int64, consumer, group, name string, limit int) ([]PendingResult, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("PendingResultsFirst: limit %d", limit)
	}
	q := `SELECT r.chain_id, r.step, r.idx, r.file, r.md5, r.size, c.grp, c.name, c.queue, u.name
		FROM results r JOIN chains c ON c.id = r.chain_id JOIN users u ON u.id = c.user_id
		WHERE c.user_id = ? AND c.grp = ? AND c.state != 'purged' AND c.consumer = ?`
	args := []any{userID, group, consumer}
	if name != "" {
		q += ` AND c.name = ?`
		args = append(args, name)
	}
	q += ` ORDER BY c.name, r.step, r.idx LIMIT ?`
	args = append(args, limit)
	var out []PendingResult
	err := d.scanPending(ctx, q, args, func(p PendingResult) { out = append(out, p) })
	return out, err
}

// scanPending runs a query of the columns of PendingResult (but the
// layout) and hands each row to each.
func (d *DB) scanPending(ctx context.Context, q string, args []any, each func(PendingResult)) error {
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var p PendingResult
		if err := rows.Scan(&p.ChainID, &p.Step, &p.Index, &p.File, &p.MD5, &p.Size, &p.Group, &p.Chain, &p.Queue, &p.User); err != nil {
			return err
		}
		p.User = strings.ToUpper(p.User)
		each(p)
	}
	return rows.Err()
}
