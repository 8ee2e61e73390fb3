package store

import (
	"context"
	"database/sql"
	"errors"
)

// ErrLimit is a per-user limit reached: nothing was recorded.
var ErrLimit = errors.New("limit reached")

// AddUpload records a scratch collection created for a user, unless the
// user has max open already (0: no limit): then it returns ErrLimit and
// how many they have. Counted in the same transaction as the insert, so
// that simultaneous requests cannot pass the limit together.
func (d *DB) AddUpload(ctx context.Context, id string, userID int64, max int) (int, error) {
	var open int
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		if max > 0 {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM uploads WHERE user_id = ?`, userID).Scan(&open); err != nil {
				return err
			}
			if open >= max {
				return ErrLimit
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO uploads(id, user_id, created) VALUES (?,?,?)`, id, userID, now())
		return err
	})
	return open, err
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

// OldUploads returns the upload collections created before the given time:
// those of clients that died between upload and submit, or that are
// still uploading (the caller tells them apart by the files' times).
func (d *DB) OldUploads(ctx context.Context, before int64) ([]OldUpload, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT uploads.id, users.name FROM uploads JOIN users ON users.id = uploads.user_id WHERE uploads.created < ?`, before)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OldUpload
	for rows.Next() {
		var u OldUpload
		if err := rows.Scan(&u.ID, &u.User); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
