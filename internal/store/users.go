package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// User is an account allowed to use the API.
type User struct {
	ID       int64
	Name     string
	Disabled bool
	// BoincUserID is the BOINC account linked to the user (0: none).
	BoincUserID int64
	// Admin: the user may see every user's chains on the status page, the
	// metrics and the administrator's report (schema version 7).
	Admin bool
}

// userCols are the columns scanUser reads, in its order.
const userCols = `id, name, disabled, boinc_user_id, admin`

func scanUser(r scanner, u *User) error {
	var dis, adm int
	if err := r.Scan(&u.ID, &u.Name, &dis, &u.BoincUserID, &adm); err != nil {
		return err
	}
	u.Disabled, u.Admin = dis != 0, adm != 0
	return nil
}

// AddUser creates a user with the given token hash.
func (d *DB) AddUser(ctx context.Context, name, tokenHash string) (int64, error) {
	var id int64
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO users(name, token_hash, created) VALUES (?, ?, ?)`, name, tokenHash, now())
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("user %q: %w", name, ErrExists)
			}
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	return id, err
}

// UserByToken finds the enabled user holding a token (by its hash).
func (d *DB) UserByToken(ctx context.Context, tokenHash string) (User, error) {
	var u User
	err := scanUser(d.queryRow(ctx, `SELECT `+userCols+` FROM users WHERE token_hash = ?`, tokenHash), &u)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// Users lists all users by name.
func (d *DB) Users(ctx context.Context) ([]User, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		if err := scanUser(rows, &u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// UserByName finds a user by name (case-insensitive).
func (d *DB) UserByName(ctx context.Context, name string) (User, error) {
	var u User
	err := scanUser(d.sql.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name = ?`, name), &u)
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("user %q: %w", name, ErrNotFound)
	}
	return u, err
}

// SetUserDisabled disables (or enables again) a user; a disabled user's
// requests are all refused, while their chains keep running.
func (d *DB) SetUserDisabled(ctx context.Context, name string, disabled bool) error {
	v := 0
	if disabled {
		v = 1
	}
	return d.updateUser(ctx, name, `UPDATE users SET disabled = ? WHERE name = ?`, v, name)
}

// SetUserAdmin grants (or revokes) the administrator's right.
func (d *DB) SetUserAdmin(ctx context.Context, name string, admin bool) error {
	v := 0
	if admin {
		v = 1
	}
	return d.updateUser(ctx, name, `UPDATE users SET admin = ? WHERE name = ?`, v, name)
}

// UserByBoincID finds the user linked to a BOINC account.
func (d *DB) UserByBoincID(ctx context.Context, boincID int64) (User, error) {
	var u User
	err := scanUser(d.sql.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE boinc_user_id = ? AND boinc_user_id != 0`, boincID), &u)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// SetBoincUser links a user to a BOINC account (0 unlinks); one account
// links to one user at most.
func (d *DB) SetBoincUser(ctx context.Context, name string, boincID int64) error {
	err := d.updateUser(ctx, name, `UPDATE users SET boinc_user_id = ? WHERE name = ?`, boincID, name)
	if isUnique(err) {
		return fmt.Errorf("BOINC account %d is linked to another user already: %w", boincID, ErrExists)
	}
	return err
}

// SetUserToken replaces a user's token hash: the old token stops working.
func (d *DB) SetUserToken(ctx context.Context, name, tokenHash string) error {
	return d.updateUser(ctx, name, `UPDATE users SET token_hash = ? WHERE name = ?`, tokenHash, name)
}

func (d *DB) updateUser(ctx context.Context, name, q string, args ...any) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %q: %w", name, ErrNotFound)
		}
		return nil
	})
}

// DeleteProbeUser removes a user that holds no chain, with its upload
// records: the short-lived account `doctor` tests uploads with. A user
// with chains is never removed.
func (d *DB) DeleteProbeUser(ctx context.Context, name string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE name = ?`, name).Scan(&id); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		var chains int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chains WHERE user_id = ?`, id).Scan(&chains); err != nil {
			return err
		}
		if chains > 0 {
			return fmt.Errorf("user %s has chains: not removed", name)
		}
		for _, q := range []string{`DELETE FROM uploads WHERE user_id = ?`,
			`DELETE FROM notify_emails WHERE user_id = ?`, `DELETE FROM notify_email_codes WHERE user_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pool_owners WHERE user_id = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		return err
	})
}
