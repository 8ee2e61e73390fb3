package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Usage is what one user holds on the server, for quota checks.
type Usage struct {
	RunningChains int   // chains in progress
	PoolBytes     int64 // pooled contents their chains (not purged) refer to, each once
}

// UsageOf measures a user's usage.
func (d *DB) UsageOf(ctx context.Context, userID int64) (Usage, error) {
	var u Usage
	err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM chains WHERE user_id = ? AND state = 'running'`, userID).Scan(&u.RunningChains)
	if err != nil {
		return u, fmt.Errorf("measuring chains in progress: %w", err)
	}
	u.PoolBytes, err = poolBytesOf(ctx, d.sql, userID)
	return u, err
}

// rowQuerier is a *sql.DB or a *sql.Tx.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// poolBytesOf measures the pooled contents a user's chains (not purged)
// refer to, each counted once.
func poolBytesOf(ctx context.Context, q rowQuerier, userID int64) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(p.size), 0) FROM pool p WHERE p.md5 IN
		(SELECT ci.md5 FROM chain_inputs ci JOIN chains c ON c.id = ci.chain_id WHERE c.user_id = ? AND c.state != 'purged')`, userID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("measuring pooled input: %w", err)
	}
	return n, nil
}

// Referenced returns the subset of md5s that the user's chains (not
// purged) already refer to: those add nothing to the user's pool usage.
// Each content is looked up by its own index entries and the search stops
// at the first chain of the user's (a content shared by thousands of
// chains costs one probe, not a read of them all).
func (d *DB) Referenced(ctx context.Context, userID int64, md5s []string) (map[string]bool, error) {
	out := map[string]bool{}
	// SQLite bounds the number of parameters; ask in slices.
	for part := range slices.Chunk(md5s, 500) {
		// A referenced content is always pooled: the pool's key gives each
		// asked content once.
		if err := d.addMD5s(ctx, out, `SELECT p.md5 FROM pool p WHERE p.md5 IN (?`+strings.Repeat(",?", len(part)-1)+`)
			AND EXISTS (SELECT 1 FROM chain_inputs ci JOIN chains c ON c.id = ci.chain_id
				WHERE ci.md5 = p.md5 AND c.user_id = ? AND c.state != 'purged')`, append(anys(part), userID)...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addMD5s adds the MD5s a query answers (its one column) to set.
func (d *DB) addMD5s(ctx context.Context, set map[string]bool, query string, args ...any) error {
	rows, err := d.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		set[m] = true
	}
	return rows.Err()
}

// Bounds are cheap upper bounds of a user's Usage, each from one index or
// one small table: enough to pass a submission far from the limits without
// reading every chain the user holds (UsageOf does).
type Bounds struct {
	Chains    int   // the user's chains in any state: >= RunningChains
	PoolBytes int64 // every pooled content, whoever uses it: >= PoolBytes
}

// BoundsOf measures the upper bounds of a user's usage.
func (d *DB) BoundsOf(ctx context.Context, userID int64) (Bounds, error) {
	var b Bounds
	if err := d.queryRow(ctx, `SELECT count(*) FROM chains WHERE user_id = ?`, userID).Scan(&b.Chains); err != nil {
		return b, fmt.Errorf("counting chains: %w", err)
	}
	if err := d.queryRow(ctx, `SELECT COALESCE(SUM(size), 0) FROM pool`).Scan(&b.PoolBytes); err != nil {
		return b, fmt.Errorf("measuring the pool: %w", err)
	}
	return b, nil
}

// PoolSizes returns the recorded sizes of those md5s that are in the pool.
func (d *DB) PoolSizes(ctx context.Context, md5s []string) (map[string]int64, error) {
	out := map[string]int64{}
	for len(md5s) > 0 {
		n := min(len(md5s), 500)
		part := md5s[:n]
		md5s = md5s[n:]
		args := make([]any, 0, n)
		for _, m := range part {
			args = append(args, m)
		}
		rows, err := d.sql.QueryContext(ctx, `SELECT md5, size FROM pool WHERE md5 IN (?`+strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var m string
			var sz int64
			if err := rows.Scan(&m, &sz); err != nil {
				rows.Close()
				return nil, err
			}
			out[m] = sz
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
