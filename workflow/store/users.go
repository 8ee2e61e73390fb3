package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// User is an account allowed to use the API.
type User struct {
	ID       int64
	Name     string
	Disabled bool
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
	var dis int
	err := d.sql.QueryRowContext(ctx, `SELECT id, name, disabled FROM users WHERE token_hash = ?`, tokenHash).Scan(&u.ID, &u.Name, &dis)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, err
	}
	u.Disabled = dis != 0
	return u, nil
}

// Users lists all users by name.
func (d *DB) Users(ctx context.Context) ([]User, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT id, name, disabled FROM users ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		var dis int
		if err := rows.Scan(&u.ID, &u.Name, &dis); err != nil {
			return nil, err
		}
		u.Disabled = dis != 0
		out = append(out, u)
	}
	return out, rows.Err()
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
