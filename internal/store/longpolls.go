package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Long polls of the events feed hold a web server's worker (under CGI a
// process) for up to a minute each, so each user may have only so many
// in progress. Under CGI every request is a process of its own, and on
// several hosts every host serves some: the count is kept here, one row
// per poll in progress. A row carries the time by which its poll has
// surely ended, so that the slot of a process killed mid-poll (which
// cannot delete its row) frees itself then.

// TakeLongPoll counts a long poll of user in, its row expiring at until:
// ok is false, and nothing is written, when the user already has max
// long polls in progress (max <= 0: no limit). release gives the slot
// back when the poll ends.
func (d *DB) TakeLongPoll(ctx context.Context, user int64, max int, until time.Time) (id int64, ok bool, err error) {
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		t := now()
		// The user's expired rows go first: their polls are over.
		if _, err := tx.ExecContext(ctx, `DELETE FROM long_polls WHERE user_id = ? AND expires < ?`, user, t); err != nil {
			return err
		}
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM long_polls WHERE user_id = ?`, user).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return nil
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO long_polls(user_id, expires) VALUES (?, ?)`, user, until.Unix())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		ok = err == nil
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("counting the long polls of user %d: %w", user, err)
	}
	return id, ok, nil
}

// ReleaseLongPoll gives a long poll's slot back.
func (d *DB) ReleaseLongPoll(ctx context.Context, id int64) error {
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM long_polls WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("ending long poll %d: %w", id, err)
	}
	return nil
}
