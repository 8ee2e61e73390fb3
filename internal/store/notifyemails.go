package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// E-mail notifications go only to addresses their user confirmed (by
// giving back a code mailed there) or the administrator registered: the
// project's mail server writes to no one else.

// How an address came to be confirmed.
const (
	EmailConfirmed = "confirmed" // the user gave back the code mailed there
	EmailByAdmin   = "admin"     // the administrator registered it
)

// ErrEmailCodeLimit refuses a code past the rate its user or its address
// may get them.
var ErrEmailCodeLimit = errors.New("too many confirmation codes asked for")

// ErrEmailCode refuses a confirmation: no code waits for that address,
// it expired, was used up, or is not the one given.
var ErrEmailCode = errors.New("the confirmation code is not valid")

func emailConfirmed(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, userID int64, address string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM notify_emails WHERE user_id = ? AND address = ?`, userID, address).Scan(&n)
	return n > 0, err
}

// EmailConfirmed tells whether the user may be mailed at address.
func (d *DB) EmailConfirmed(ctx context.Context, userID int64, address string) (bool, error) {
	return emailConfirmed(ctx, d.sql, userID, address)
}

// RegisterEmail records address as confirmed for the user (how:
// EmailConfirmed or EmailByAdmin); a second registration changes nothing.
func (d *DB) RegisterEmail(ctx context.Context, userID int64, address, how string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO notify_emails(user_id, address, how, created) VALUES (?,?,?,?)`,
			userID, address, how, now())
		return err
	})
}

// ConfirmedEmails lists the user's confirmed addresses.
func (d *DB) ConfirmedEmails(ctx context.Context, userID int64) ([]string, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT address FROM notify_emails WHERE user_id = ? ORDER BY address`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// CodeRate bounds the confirmation codes mailed: per user in an hour, and
// per address (whoever asks) in a day.
type CodeRate struct {
	PerUserHour, PerAddressDay int
}

// NewEmailCode records a confirmation code (its salted hash) for the
// user's address, valid until expires, unless the user or the address has
// had as many codes as rate allows lately (ErrEmailCodeLimit). A code
// counts from when it is asked for, mailed or not.
func (d *DB) NewEmailCode(ctx context.Context, userID int64, address, codeHash string, expires int64, rate CodeRate) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		t := now()
		if _, err := tx.ExecContext(ctx, `DELETE FROM notify_email_codes WHERE created < ? AND expires < ?`, t-86400, t); err != nil {
			return err
		}
		var byUser, byAddr int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM notify_email_codes WHERE user_id = ? AND created > ?`, userID, t-3600).Scan(&byUser); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM notify_email_codes WHERE address = ? AND created > ?`, address, t-86400).Scan(&byAddr); err != nil {
			return err
		}
		if byUser >= rate.PerUserHour {
			return fmt.Errorf("%w: at most %d an hour per user; try again later", ErrEmailCodeLimit, rate.PerUserHour)
		}
		if byAddr >= rate.PerAddressDay {
			return fmt.Errorf("%w: at most %d a day for one address; try again tomorrow", ErrEmailCodeLimit, rate.PerAddressDay)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notify_email_codes(user_id, address, code_hash, expires, created) VALUES (?,?,?,?,?)`,
			userID, address, codeHash, expires, t)
		return err
	})
}

// ConfirmEmail checks a code given back for the user's address against
// the newest unused, unexpired one (match compares it with the stored
// hash). A match confirms the address and uses the code up; a mismatch
// counts, and after maxAttempts the code is void. ErrEmailCode otherwise.
func (d *DB) ConfirmEmail(ctx context.Context, userID int64, address string, match func(hash string) bool, maxAttempts int) error {
	var wrong bool
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		t := now()
		var id int64
		var hash string
		var attempts int
		err := tx.QueryRowContext(ctx, `SELECT id, code_hash, attempts FROM notify_email_codes
			WHERE user_id = ? AND address = ? AND code_hash != '' AND expires >= ? ORDER BY id DESC LIMIT 1`, userID, address, t).Scan(&id, &hash, &attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no code waits for %s (none was asked for, it expired or was used): ask for a new one", ErrEmailCode, address)
		}
		if err != nil {
			return err
		}
		if attempts >= maxAttempts {
			return fmt.Errorf("%w: too many wrong codes for %s: ask for a new one", ErrEmailCode, address)
		}
		if !match(hash) {
			wrong = true
			_, err := tx.ExecContext(ctx, `UPDATE notify_email_codes SET attempts = attempts + 1 WHERE id = ?`, id)
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notify_email_codes SET code_hash = '' WHERE id = ?`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO notify_emails(user_id, address, how, created) VALUES (?,?,?,?)`,
			userID, address, EmailConfirmed, t)
		return err
	})
	if err == nil && wrong {
		return fmt.Errorf("%w: wrong code for %s", ErrEmailCode, address)
	}
	return err
}

// migrateV10 makes schema 10's data: the e-mail addresses of targets for
// all of a user's groups were registered by the administrator (a
// submission's are of its group alone), so they count as registered; and
// every user with a target gets a signing secret.
func migrateV10(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO notify_emails(user_id, address, how, created)
		SELECT user_id, address, 'admin', min(created) FROM notify_targets WHERE kind = 'email' AND grp = '' GROUP BY user_id, address`); err != nil {
		return fmt.Errorf("registering the administrator's e-mail targets: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT t.user_id FROM notify_targets t JOIN users u ON u.id = t.user_id WHERE u.notify_secret = ''`)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET notify_secret = ? WHERE id = ? AND notify_secret = ''`, newSecret(), id); err != nil {
			return fmt.Errorf("making signing secrets: %w", err)
		}
	}
	return nil
}
