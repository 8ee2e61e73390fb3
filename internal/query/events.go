package query

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
)

// Events returns up to limit of a user's events after the id after.
func (r *Reader) Events(ctx context.Context, userID, after int64, limit int) ([]store.Event, error) {
	return r.db.Events(ctx, userID, after, limit)
}

// LastEventID returns the newest event's id, anybody's.
func (r *Reader) LastEventID(ctx context.Context) (int64, error) { return r.db.LastEventID(ctx) }

// LastUserEventID returns the id of a user's newest event.
func (r *Reader) LastUserEventID(ctx context.Context, userID int64) (int64, error) {
	return r.db.LastUserEventID(ctx, userID)
}

// EventUsers lists the users with events after id from, up to id to.
func (r *Reader) EventUsers(ctx context.Context, from, to int64) ([]int64, error) {
	return r.db.EventUsers(ctx, from, to)
}
