package query

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
)

// Chains returns a user's chains: all, a group's, or one.
func (r *Reader) Chains(ctx context.Context, userID int64, group, name string) ([]store.Chain, error) {
	return r.db.Chains(ctx, userID, group, name)
}

// CurrentSteps returns the step each of those chains is at, by chain id.
func (r *Reader) CurrentSteps(ctx context.Context, userID int64, group, name string) (map[int64]store.Current, error) {
	return r.db.CurrentSteps(ctx, userID, group, name)
}

// GroupChains returns the rows of a group's page.
func (r *Reader) GroupChains(ctx context.Context, userID int64, group string) ([]store.ChainRow, error) {
	return r.db.GroupChains(ctx, userID, group)
}

// ChainSteps returns a chain's steps and the attempts of each.
func (r *Reader) ChainSteps(ctx context.Context, chainID int64) ([]store.StepRow, []store.Attempt, error) {
	return r.db.ChainSteps(ctx, chainID)
}

// PendingResults returns the results of a user's chains not yet retrieved.
func (r *Reader) PendingResults(ctx context.Context, userID int64, group, name string) ([]store.PendingResult, error) {
	return r.db.PendingResults(ctx, userID, group, name)
}

// StepWUs lists, per group, the work units BOINC holds for a user's steps
// (queued, done or failed) created at or after since, and those of the
// steps' earlier attempts that ended since: what -gridstatus asks BOINC
// about.
func (r *Reader) StepWUs(ctx context.Context, userID int64, group string, since int64) (map[string][]string, error) {
	return r.db.StepWUs(ctx, userID, group, since)
}
