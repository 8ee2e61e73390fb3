package store

import (
	"context"
	"database/sql"
	"errors"
)

// AddUpload records a scratch collection created for a user.
func (d *DB) AddUpload(ctx context.Context, id string, userID int64) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO uploads(id, user_id, created) VALUES (?,?,?)`, id, userID, now())
		return err
	})
}

// UploadOwner returns the user owning an upload collection.
func (d *DB) UploadOwner(ctx context.Context, id string) (int64, error) {
	var uid int64
	err := d.sql.QueryRowContext(ctx, `SELECT user_id FROM uploads WHERE id = ?`, id).Scan(&uid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return uid, err
}

// DeleteUpload forgets an upload collection.
func (d *DB) DeleteUpload(ctx context.Context, id string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM uploads WHERE id = ?`, id)
		return err
	})
}
