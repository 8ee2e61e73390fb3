package store

import (
	"context"
	"database/sql"
	"fmt"
)

// PoolMissing returns the contents of md5s the user lacks, in order: those
// not in the pool, and those in it the user does not own (poolowners.go);
// it marks the others as recently wanted so collection spares them.
func (d *DB) PoolMissing(ctx context.Context, userID int64, md5s []string) ([]string, error) {
	var missing []string
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		missing = missing[:0]
		t := now()
		// Prepared once: parsing it for each of thousands of contents cost
		// more than running it.
		st := newStmtCache(tx)
		defer st.Close()
		for _, m := range md5s {
			res, err := st.ExecContext(ctx, `UPDATE pool SET touched = ? WHERE md5 = ?
				AND EXISTS (SELECT 1 FROM pool_owners o WHERE o.user_id = ? AND o.md5 = ?)`, t, m, userID, m)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				missing = append(missing, m)
			}
		}
		return nil
	})
	return missing, err
}

// PoolAdd records a content now present in the pool.
func (d *DB) PoolAdd(ctx context.Context, md5 string, size int64) error {
	return d.PoolAddAll(ctx, []PoolEntry{{MD5: md5, Size: size}})
}

// PoolEntry is a content of the pool and its size.
type PoolEntry struct {
	MD5  string
	Size int64
}

// PoolAddAll records contents now present in the pool, all in one
// transaction (a submission brings thousands).
func (d *DB) PoolAddAll(ctx context.Context, entries []PoolEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return d.Tx(ctx, func(tx *sql.Tx) error {
		st := newStmtCache(tx)
		defer st.Close()
		return poolUpsert(ctx, st, entries)
	})
}

func poolUpsert(ctx context.Context, ex execer, entries []PoolEntry) error {
	t := now()
	for _, e := range entries {
		if _, err := ex.ExecContext(ctx, `INSERT INTO pool(md5, size, touched) VALUES (?,?,?) ON CONFLICT(md5) DO UPDATE SET touched = excluded.touched`, e.MD5, e.Size, t); err != nil {
			return err
		}
	}
	return nil
}

// Collect finds the pooled contents that no live chain and no unfinished
// step refers to and that were not wanted since before, and the contents
// that no unfinished step reads (their download links may go). It looks at
// the pool collectBatch contents at a time, each batch in a write
// transaction of its own: it calls remove with the batch's two lists while
// still holding the write lock, so no concurrent submission or hook can
// start using a content between the decision and the deletion; then
// forgets the collected ones and lets go of the lock. One transaction over
// the whole pool held the lock for as long as removing the files of every
// content took (a pool of a hundred thousand contents: longer than the
// busy timeout, and every other writer failed).
func (d *DB) Collect(ctx context.Context, before int64, remove func(pool, links []string) error) error {
	after := ""
	for {
		// The batch's bounds are read outside the transaction: a content
		// added meanwhile is looked at by the next collection.
		span, err := d.poolSpan(ctx, after, collectBatch)
		if err != nil || len(span) == 0 {
			return err
		}
		lo, hi := after, span[len(span)-1]
		err = d.Tx(ctx, func(tx *sql.Tx) error {
			pool, err := column(ctx, tx, `SELECT md5 FROM pool p WHERE p.md5 > ? AND p.md5 <= ? AND touched < ?
				AND NOT EXISTS (SELECT 1 FROM chain_inputs ci JOIN chains c ON c.id = ci.chain_id WHERE ci.md5 = p.md5 AND c.state != 'purged')
				AND NOT `+readByUnfinished("p.md5"), lo, hi, before)
			if err != nil {
				return err
			}
			links, err := column(ctx, tx, `SELECT md5 FROM pool p WHERE p.md5 > ? AND p.md5 <= ? AND NOT `+readByUnfinished("p.md5"), lo, hi)
			if err != nil {
				return err
			}
			if len(pool) == 0 && len(links) == 0 {
				return nil
			}
			if err := remove(pool, links); err != nil {
				return err
			}
			for _, m := range pool {
				if _, err := tx.ExecContext(ctx, `DELETE FROM pool WHERE md5 = ?`, m); err != nil {
					return err
				}
			}
			return forgetOwners(ctx, tx, pool)
		})
		if err != nil || len(span) < collectBatch {
			return err
		}
		after = hi
	}
}

// collectBatch bounds the contents one transaction of Collect looks at,
// and so how long it holds the write lock (a variable for the tests).
var collectBatch = 1000

// poolSpan returns the next at most n contents of the pool after md5
// after, in order.
func (d *DB) poolSpan(ctx context.Context, after string, n int) ([]string, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT md5 FROM pool WHERE md5 > ? ORDER BY md5 LIMIT ?`, after, n)
	if err != nil {
		return nil, fmt.Errorf("listing the pool's contents: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("listing the pool's contents: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// column reads a query's one text column.
func column(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// readByUnfinished is the condition "a step BOINC has or will have reads
// content md5": a step's own inputs, or the chain's inputs for a step 0
// recorded with its chain (see insertChains).
func readByUnfinished(md5 string) string {
	return `(EXISTS (SELECT 1 FROM step_inputs si JOIN steps s ON s.wu_name = si.wu_name WHERE si.md5 = ` + md5 + ` AND s.state IN ('creating', 'pending', 'queued'))
		OR EXISTS (SELECT 1 FROM chain_inputs ci JOIN steps s ON s.chain_id = ci.chain_id AND s.step = 0 WHERE ci.md5 = ` + md5 + ` AND s.state IN ('creating', 'pending', 'queued')))`
}
