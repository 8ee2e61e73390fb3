package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
)

// Who may use a pooled content. The pool keeps one copy of each content
// whoever sent it, but a content counts as present for a user (PoolMissing,
// and a submission naming it without its bytes) only once that user has
// shown to hold it: sent its bytes (an upload, an inline content, a file
// of the original protocol), or used it in one of their chains (an input,
// or an output that became the next step's input). Otherwise the pool
// would tell anyone whether another user's file exists, and let them
// submit it by its MD5 alone.

// ownRows records md5s as user's, inside a transaction (each once).
func ownRows(ctx context.Context, ex execer, userID int64, md5s []string) error {
	if len(md5s) == 0 {
		return nil
	}
	md5s = slices.Compact(slices.Sorted(slices.Values(md5s)))
	args := make([]any, 0, 2*len(md5s))
	for _, m := range md5s {
		if m != "" {
			args = append(args, userID, m)
		}
	}
	return insertValues(ctx, ex, `INSERT OR IGNORE INTO pool_owners(user_id, md5) VALUES `, 2, args)
}

// PoolAddOwned is PoolAddAll that also records the contents as the
// user's, in the same transaction.
func (d *DB) PoolAddOwned(ctx context.Context, userID int64, entries []PoolEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return d.Tx(ctx, func(tx *sql.Tx) error {
		st := newStmtCache(tx)
		defer st.Close()
		if err := poolUpsert(ctx, st, entries); err != nil {
			return err
		}
		return ownRows(ctx, tx, userID, entrySums(entries))
	})
}

func entrySums(entries []PoolEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.MD5
	}
	return out
}

// PoolOwned returns those of md5s the user may use (see above).
func (d *DB) PoolOwned(ctx context.Context, userID int64, md5s []string) (map[string]bool, error) {
	out := map[string]bool{}
	for part := range slices.Chunk(md5s, 400) {
		if err := d.addMD5s(ctx, out, `SELECT md5 FROM pool_owners WHERE user_id = ? AND md5 IN (?`+strings.Repeat(",?", len(part)-1)+`)`,
			append([]any{userID}, anys(part)...)...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// forgetOwners drops the owners of contents leaving the pool: whoever
// brings one back shows again that they hold it.
func forgetOwners(ctx context.Context, ex execer, md5s []string) error {
	for part := range slices.Chunk(md5s, 400) {
		if _, err := ex.ExecContext(ctx, `DELETE FROM pool_owners WHERE md5 IN (?`+strings.Repeat(",?", len(part)-1)+`)`, anys(part)...); err != nil {
			return err
		}
	}
	return nil
}
