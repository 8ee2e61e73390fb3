package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ForgetUnindexed takes md5s, contents found in the pool directory and
// untouched for long, and calls remove with those no row of the pool's
// index names and nothing in use refers to (a live chain, an unfinished
// step), with their owner rows deleted: what a process killed between
// writing a content and recording it leaves, and what Collect, walking
// the rows, never finds. remove runs while the write lock is held, so no
// submission records one of them meanwhile; it removes only those whose
// file is still untouched, and returns them: only their owner rows go.
func (d *DB) ForgetUnindexed(ctx context.Context, md5s []string, remove func(orphans []string) []string) error {
	for rest := md5s; len(rest) > 0; {
		part := rest[:min(len(rest), 400)]
		rest = rest[len(part):]
		err := d.Tx(ctx, func(tx *sql.Tx) error {
			indexed, err := indexedOf(ctx, tx, part)
			if err != nil {
				return err
			}
			used, err := referenced(ctx, tx, part)
			if err != nil {
				return err
			}
			var orphans []string
			for _, m := range part {
				if !indexed[m] && !used[m] {
					orphans = append(orphans, m)
				}
			}
			if len(orphans) == 0 {
				return nil
			}
			return forgetOwners(ctx, tx, remove(orphans))
		})
		if err != nil {
			return fmt.Errorf("removing pool contents no row names: %w", err)
		}
	}
	return nil
}

// ForgetStrayOwners deletes the owner rows of up to n contents after
// after (in MD5 order) that have no row in the pool's index and that
// nothing in use refers to: a content taken from the pool while a
// submission recorded its user as owner. Such a row would stay for ever
// (collection walks the pool's rows). It returns how many contents it
// freed of owner rows, and where the next call goes on ("" once the end
// is reached): contents still in use are passed over, not looked at again
// and again.
func (d *DB) ForgetStrayOwners(ctx context.Context, after string, n int) (int, string, error) {
	stray, err := column(ctx, d.sql, `SELECT DISTINCT o.md5 FROM pool_owners o WHERE o.md5 > ? AND NOT EXISTS (SELECT 1 FROM pool p WHERE p.md5 = o.md5) ORDER BY o.md5 LIMIT ?`, after, n)
	if err != nil || len(stray) == 0 {
		return 0, "", err
	}
	next := ""
	if len(stray) == n {
		next = stray[len(stray)-1]
	}
	k := 0
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		// Looked at again under the write lock: a submission may have
		// indexed one meanwhile.
		indexed, err := indexedOf(ctx, tx, stray)
		if err != nil {
			return err
		}
		used, err := referenced(ctx, tx, stray)
		if err != nil {
			return err
		}
		var gone []string
		for _, m := range stray {
			if !indexed[m] && !used[m] {
				gone = append(gone, m)
			}
		}
		k = len(gone)
		return forgetOwners(ctx, tx, gone)
	})
	if err != nil {
		return 0, after, fmt.Errorf("removing owner rows of contents no longer pooled: %w", err)
	}
	return k, next, nil
}

// indexedOf returns those of md5s (at most 400) the pool's index names.
func indexedOf(ctx context.Context, tx *sql.Tx, md5s []string) (map[string]bool, error) {
	got, err := column(ctx, tx, `SELECT md5 FROM pool WHERE md5 IN (?`+strings.Repeat(",?", len(md5s)-1)+`)`, anys(md5s)...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(got))
	for _, m := range got {
		out[m] = true
	}
	return out, nil
}
