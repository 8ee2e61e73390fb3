package boincdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Account is a BOINC account, as rboinc reads it.
type Account struct {
	ID   int64
	Name string
}

// AccountByAuthenticator finds the BOINC account whose authenticator (its
// login key) this is; found is false when there is none.
func (d *DB) AccountByAuthenticator(ctx context.Context, auth string) (a Account, found bool, err error) {
	err = d.QueryRowContext(ctx, "SELECT id, name FROM `user` WHERE authenticator = ?", auth).Scan(&a.ID, &a.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("reading BOINC's user table: %w", err)
	}
	return a, true, nil
}

// AccountByID finds a BOINC account by id.
func (d *DB) AccountByID(ctx context.Context, id int64) (a Account, found bool, err error) {
	err = d.QueryRowContext(ctx, "SELECT id, name FROM `user` WHERE id = ?", id).Scan(&a.ID, &a.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("reading BOINC's user table: %w", err)
	}
	return a, true, nil
}

// MaySubmit tells whether a BOINC account may submit jobs, as BOINC's
// remote job submission decides it: a project that grants the right
// (rows in user_submit) grants it to the accounts that have a row there;
// a project that grants it to nobody that way does not use it, and every
// account may.
func (d *DB) MaySubmit(ctx context.Context, id int64) (bool, error) {
	var any int
	err := d.QueryRowContext(ctx, "SELECT count(*) FROM user_submit").Scan(&any)
	if err != nil {
		return false, fmt.Errorf("reading BOINC's user_submit table: %w", err)
	}
	if any == 0 {
		return true, nil
	}
	var n int
	if err := d.QueryRowContext(ctx, "SELECT count(*) FROM user_submit WHERE user_id = ?", id).Scan(&n); err != nil {
		return false, fmt.Errorf("reading BOINC's user_submit table: %w", err)
	}
	return n > 0, nil
}
