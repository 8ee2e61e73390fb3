package query

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
)

// GroupCounts counts the chains (not purged) of a user, by group and
// state; userID 0 counts every user's.
func (r *Reader) GroupCounts(ctx context.Context, userID int64) ([]store.GroupCount, error) {
	return r.db.GroupCounts(ctx, userID)
}

// CountSteps counts the done steps of a user (userID 0: every user's; a
// group: that group's only) finished at or after since, in the buckets of
// edges and hours: the rates and charts.
func (r *Reader) CountSteps(ctx context.Context, userID int64, group string, since, now int64, edges []int64, hours int, rateCut int64) (store.StepCounts, error) {
	return r.db.CountSteps(ctx, userID, group, since, now, edges, hours, rateCut)
}

// FailedChains returns up to limit failed chains of a user and how many
// there are.
func (r *Reader) FailedChains(ctx context.Context, userID int64, limit int) ([]store.FailedChain, int, error) {
	return r.db.FailedChains(ctx, userID, limit)
}

// FailureReasons returns why a user's chains failed.
func (r *Reader) FailureReasons(ctx context.Context, userID int64) ([]string, error) {
	return r.db.FailureReasons(ctx, userID)
}

// LateStepsOf lists up to limit late steps of a user (userID 0: every
// user's).
func (r *Reader) LateStepsOf(ctx context.Context, userID int64, limit int) ([]store.LateStepRow, error) {
	return r.db.LateStepsOf(ctx, userID, limit)
}

// DiskOf is what a user's chains hold on disk: result files waiting for
// them, and the pool contents their chains refer to.
func (r *Reader) DiskOf(ctx context.Context, userID int64) (results, pool int64, err error) {
	return r.db.DiskOf(ctx, userID)
}

// ServerTotals returns the whole server's figures.
func (r *Reader) ServerTotals(ctx context.Context) (store.Totals, error) {
	return r.db.ServerTotals(ctx)
}

// Counts returns the server's counters (store.Count*).
func (r *Reader) Counts(ctx context.Context) (map[string]uint64, error) { return r.db.Counts(ctx) }

// Latencies returns the latency histograms (store.Latency*).
func (r *Reader) Latencies(ctx context.Context) (map[string]store.LatencyHist, error) {
	return r.db.Latencies(ctx)
}
