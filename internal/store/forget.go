package store

import (
	"context"
	"database/sql"
	"strings"
)

// ForgetUnused removes from the pool's index those of md5s that no live
// chain and no unfinished step refers to, and calls remove with them while
// it still holds the write lock, so that no submission or hook starts using
// one between the decision and the removal. It undoes what a failed
// request brought into the pool.
//
// remove is called even when the index cannot be changed (a full disk
// refuses the database's writes, not the files' removal): a content the
// index lists without its file counts as missing everywhere, and a later
// upload of it repairs the entry.
func (d *DB) ForgetUnused(ctx context.Context, md5s []string, remove func(unused []string)) error {
	if len(md5s) == 0 {
		return nil
	}
	return d.Tx(ctx, func(tx *sql.Tx) error {
		var unused []string
		for rest := md5s; len(rest) > 0; {
			part := rest[:min(len(rest), 400)]
			rest = rest[len(part):]
			used, err := referenced(ctx, tx, part)
			if err != nil {
				return err
			}
			for _, m := range part {
				if !used[m] {
					unused = append(unused, m)
				}
			}
		}
		var err error
		for rest := unused; len(rest) > 0 && err == nil; {
			part := rest[:min(len(rest), 400)]
			rest = rest[len(part):]
			_, err = tx.ExecContext(ctx, `DELETE FROM pool WHERE md5 IN (?`+strings.Repeat(",?", len(part)-1)+`)`, anys(part)...)
		}
		if err == nil {
			err = forgetOwners(ctx, tx, unused)
		}
		remove(unused)
		return err
	})
}

// referenced returns those of md5s that a live chain or an unfinished step
// refers to.
func referenced(ctx context.Context, tx *sql.Tx, md5s []string) (map[string]bool, error) {
	in := `(?` + strings.Repeat(",?", len(md5s)-1) + `)`
	args := append(append(anys(md5s), anys(md5s)...), anys(md5s)...)
	rows, err := tx.QueryContext(ctx, `SELECT ci.md5 FROM chain_inputs ci JOIN chains c ON c.id = ci.chain_id WHERE ci.md5 IN `+in+` AND c.state != 'purged'
		UNION SELECT si.md5 FROM step_inputs si JOIN steps s ON s.wu_name = si.wu_name WHERE si.md5 IN `+in+` AND s.state IN ('creating', 'pending', 'queued')
		UNION SELECT ci.md5 FROM chain_inputs ci JOIN steps s ON s.chain_id = ci.chain_id AND s.step = 0 WHERE ci.md5 IN `+in+` AND s.state IN ('creating', 'pending', 'queued')`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	used := map[string]bool{}
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, err
		}
		used[m] = true
	}
	return used, rows.Err()
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
