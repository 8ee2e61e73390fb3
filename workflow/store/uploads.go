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

// OldUpload is an upload collection left behind.
type OldUpload struct {
	ID   string
	User string
}

// TakeOldUploads forgets and returns the upload collections created before
// the given time (clients that died between upload and submit).
func (d *DB) TakeOldUploads(ctx context.Context, before int64) ([]OldUpload, error) {
	var out []OldUpload
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `DELETE FROM uploads WHERE created < ? RETURNING id, (SELECT name FROM users WHERE users.id = uploads.user_id)`, before)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u OldUpload
			if err := rows.Scan(&u.ID, &u.User); err != nil {
				return err
			}
			out = append(out, u)
		}
		return rows.Err()
	})
	return out, err
}
