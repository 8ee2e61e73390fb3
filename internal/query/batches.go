package query

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
)

// Batches lists a user's batches, without their jobs.
func (r *Reader) Batches(ctx context.Context, userID int64) ([]store.Batch, error) {
	return r.db.Batches(ctx, userID)
}

// BatchByName finds one of a user's batches (store.ErrNotFound if none).
func (r *Reader) BatchByName(ctx context.Context, userID int64, name string) (store.Batch, error) {
	return r.db.BatchByName(ctx, userID, name)
}

// BatchJobs lists a batch's jobs changed at or after since (0: all), with
// their chains' states, in job-name order.
func (r *Reader) BatchJobs(ctx context.Context, b store.Batch, since int64) ([]store.JobState, error) {
	return r.db.BatchJobs(ctx, b, since)
}

// JobBatch finds the batch and chain of one of a user's jobs
// (store.ErrNotFound if none).
func (r *Reader) JobBatch(ctx context.Context, userID int64, job string) (store.Batch, string, error) {
	return r.db.JobBatch(ctx, userID, job)
}
