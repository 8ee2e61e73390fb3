package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Batch is a named set of one user's chains, all in one group that is the
// batch's alone (HTCondor's BOINC GAHP submits and follows batches).
type Batch struct {
	ID      int64
	UserID  int64
	Name    string
	Group   string
	Queue   string
	Created int64
	Lease   int64 // absolute, seconds since the epoch; 0: none
}

// BatchJob is one job of a batch: its name and its chain's.
type BatchJob struct {
	Name  string
	Chain string
}

// JobState is a job of a batch with its chain's state and last change.
type JobState struct {
	Name    string
	Chain   string
	State   string // the chain's state
	Updated int64
}

// CreateBatch records a batch and its jobs, before its chains are made.
// A batch name, a group or a job name the user has already fails with an
// error wrapping ErrExists that names it.
func (d *DB) CreateBatch(ctx context.Context, b Batch, jobs []BatchJob) (int64, error) {
	var id int64
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO batches(user_id, name, grp, queue, created, lease) VALUES (?,?,?,?,?,?) RETURNING id`,
			b.UserID, b.Name, b.Group, b.Queue, now(), b.Lease).Scan(&id)
		if isUnique(err) {
			return fmt.Errorf("you have a batch named %s (or one in group %s) already: %w", b.Name, b.Group, ErrExists)
		}
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chains WHERE user_id = ? AND grp = ? AND state != 'purged'`, b.UserID, b.Group).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("group %s, which batch %s would have, holds chains already: %w", b.Group, b.Name, ErrExists)
		}
		if err := insertBatchJobs(ctx, tx, id, b.UserID, jobs); isUnique(err) {
			return fmt.Errorf("a job name of batch %s is in use already (job names are unique among all your batches): %w", b.Name, ErrExists)
		} else if err != nil {
			return err
		}
		return forgetRetired(ctx, tx, b)
	})
	return id, err
}

// RetiredBatchDays is how long a retired batch's name is remembered: a
// retirement sent again (its answer lost, the server or the GAHP killed
// mid-request) is answered as done, not as a batch that never was.
const RetiredBatchDays = 30

// DropBatch forgets a batch's records (not its chains), remembering its
// name and its jobs' names as retired for RetiredBatchDays.
func (d *DB) DropBatch(ctx context.Context, b Batch) error {
	t := now()
	return d.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO retired_jobs(user_id, name, batch, retired) SELECT user_id, name, ?, ? FROM batch_jobs WHERE batch_id = ?
			ON CONFLICT(user_id, name) DO UPDATE SET batch = excluded.batch, retired = excluded.retired`, b.Name, t, b.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM retired_jobs WHERE retired < ?`, t-RetiredBatchDays*86400); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM batch_jobs WHERE batch_id = ?`, b.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM batches WHERE id = ?`, b.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM retired_batches WHERE user_id = ? AND name = ?`, b.UserID, b.Name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO retired_batches(user_id, name, retired) VALUES (?,?,?)`, b.UserID, b.Name, t); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM retired_batches WHERE retired < ?`, t-RetiredBatchDays*86400)
		return err
	})
}

// BatchRetired tells whether the user retired a batch of this name within
// RetiredBatchDays (and made none of that name since).
func (d *DB) BatchRetired(ctx context.Context, userID int64, name string) (bool, error) {
	_, ok, err := d.BatchRetiredAt(ctx, userID, name)
	return ok, err
}

// BatchRetiredAt is when the user retired a batch of this name (Unix
// seconds), if within RetiredBatchDays and none of that name was made
// since.
func (d *DB) BatchRetiredAt(ctx context.Context, userID int64, name string) (int64, bool, error) {
	var t int64
	err := d.sql.QueryRowContext(ctx, `SELECT retired FROM retired_batches WHERE user_id = ? AND name = ? AND retired >= ?`,
		userID, name, now()-RetiredBatchDays*86400).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return t, err == nil, err
}

// JobRetired tells whether the user's job was in a batch the user retired
// within RetiredBatchDays, and names that batch. Once a batch of that name
// is made again, its retired jobs are forgotten with it (forgetRetired).
func (d *DB) JobRetired(ctx context.Context, userID int64, job string) (string, bool, error) {
	var batch string
	err := d.sql.QueryRowContext(ctx, `SELECT j.batch FROM retired_jobs j
		JOIN retired_batches b ON b.user_id = j.user_id AND b.name = j.batch AND b.retired = j.retired
		WHERE j.user_id = ? AND j.name = ? AND b.retired >= ?`, userID, job, now()-RetiredBatchDays*86400).Scan(&batch)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return batch, err == nil, err
}

// DropUnusedBatch forgets the batch of a failed submission, unless its
// group holds chains: a commit whose outcome was unknown may have recorded
// them, and the batch then stays for them (a resubmission of the same
// batch completes it). Reports whether it was dropped.
func (d *DB) DropUnusedBatch(ctx context.Context, b Batch) (bool, error) {
	dropped := false
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chains WHERE user_id = ? AND grp = ? AND state != 'purged'`, b.UserID, b.Group).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM batch_jobs WHERE batch_id = ?`, b.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM batches WHERE id = ?`, b.ID)
		dropped = err == nil
		return err
	})
	return dropped && err == nil, err
}

// KeepBatch records batch b with its jobs again when no batch of its name
// is there, after its chains were recorded: a failed duplicate of the
// same submission (its client gone, and sent again) drops the batch when
// it finds no chain in its group, which may be before this request's
// chains committed; the chains would then be in no batch, unknown to
// HTCondor's GAHP, and the name and group refused to the request sent
// again. Reports whether it recorded it. A batch of that name recorded
// meanwhile (another duplicate's) is left as it is.
func (d *DB) KeepBatch(ctx context.Context, b Batch, jobs []BatchJob) (bool, error) {
	kept := false
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		kept = false
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM batches WHERE user_id = ? AND name = ?`, b.UserID, b.Name).Scan(&n); err != nil || n > 0 {
			return err
		}
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO batches(user_id, name, grp, queue, created, lease) VALUES (?,?,?,?,?,?) RETURNING id`,
			b.UserID, b.Name, b.Group, b.Queue, now(), b.Lease).Scan(&id)
		if isUnique(err) {
			return nil // another batch has the group
		}
		if err != nil {
			return err
		}
		if err := insertBatchJobs(ctx, tx, id, b.UserID, jobs); isUnique(err) {
			return fmt.Errorf("recording batch %s again: a job name of it is in another batch: %w", b.Name, ErrExists)
		} else if err != nil {
			return err
		}
		kept = true
		return forgetRetired(ctx, tx, b)
	})
	return kept && err == nil, err
}

// forgetRetired forgets that a batch of b's name was retired: the name is
// a live batch's again.
func forgetRetired(ctx context.Context, tx *sql.Tx, b Batch) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM retired_batches WHERE user_id = ? AND name = ?`, b.UserID, b.Name)
	return err
}

const batchCols = `id, user_id, name, grp, queue, created, lease`

func scanBatch(s scanner) (Batch, error) {
	var b Batch
	err := s.Scan(&b.ID, &b.UserID, &b.Name, &b.Group, &b.Queue, &b.Created, &b.Lease)
	return b, err
}

// BatchByName finds one of the user's batches (ErrNotFound if none).
func (d *DB) BatchByName(ctx context.Context, userID int64, name string) (Batch, error) {
	b, err := scanBatch(d.sql.QueryRowContext(ctx, `SELECT `+batchCols+` FROM batches WHERE user_id = ? AND name = ?`, userID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("batch %s: %w", name, ErrNotFound)
	}
	return b, err
}

// Batches lists the user's batches by name.
func (d *DB) Batches(ctx context.Context, userID int64) ([]Batch, error) {
	return d.queryBatches(ctx, `SELECT `+batchCols+` FROM batches WHERE user_id = ? ORDER BY name`, userID)
}

// ExpiredBatches lists the batches, of every user, whose lease ended
// before now.
func (d *DB) ExpiredBatches(ctx context.Context, now int64) ([]Batch, error) {
	return d.queryBatches(ctx, `SELECT `+batchCols+` FROM batches WHERE lease != 0 AND lease < ? ORDER BY id`, now)
}

func (d *DB) queryBatches(ctx context.Context, q string, args ...any) ([]Batch, error) {
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Batch
	for rows.Next() {
		b, err := scanBatch(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// SetLease sets a batch's lease (0: none).
func (d *DB) SetLease(ctx context.Context, id, lease int64) error {
	_, err := d.sql.ExecContext(ctx, `UPDATE batches SET lease = ? WHERE id = ?`, lease, id)
	return err
}

// BatchJobs lists a batch's jobs changed at or after since (0: all), with
// their chains' states, in job-name order.
func (d *DB) BatchJobs(ctx context.Context, b Batch, since int64) ([]JobState, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT j.name, j.chain, coalesce(c.state, 'purged'), coalesce(c.updated, 0)
		FROM batch_jobs j LEFT JOIN chains c ON c.user_id = j.user_id AND c.grp = ? AND c.name = j.chain AND c.state != 'purged'
		WHERE j.batch_id = ? AND coalesce(c.updated, 0) >= ? ORDER BY j.name`, b.Group, b.ID, since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []JobState
	for rows.Next() {
		var j JobState
		if err := rows.Scan(&j.Name, &j.Chain, &j.State, &j.Updated); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// JobBatch finds the batch and chain of one of the user's jobs
// (ErrNotFound if none).
func (d *DB) JobBatch(ctx context.Context, userID int64, job string) (Batch, string, error) {
	var chain string
	var b Batch
	err := d.sql.QueryRowContext(ctx, `SELECT b.id, b.user_id, b.name, b.grp, b.queue, b.created, b.lease, j.chain
		FROM batch_jobs j JOIN batches b ON b.id = j.batch_id WHERE j.user_id = ? AND j.name = ?`, userID, job).
		Scan(&b.ID, &b.UserID, &b.Name, &b.Group, &b.Queue, &b.Created, &b.Lease, &chain)
	if errors.Is(err, sql.ErrNoRows) {
		return b, "", fmt.Errorf("job %s: %w", job, ErrNotFound)
	}
	return b, chain, err
}

// insertBatchJobs records batch id's jobs, 200 rows a statement.
func insertBatchJobs(ctx context.Context, tx *sql.Tx, id, userID int64, jobs []BatchJob) error {
	for start := 0; start < len(jobs); start += 200 {
		part := jobs[start:min(start+200, len(jobs))]
		args := make([]any, 0, 4*len(part))
		for _, j := range part {
			args = append(args, id, userID, j.Name, j.Chain)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO batch_jobs(batch_id, user_id, name, chain) VALUES `+valueRows(len(part), 4), args...); err != nil {
			return err
		}
	}
	return nil
}
