package engine

import (
	"context"
	"time"
)

// TakeLongPoll counts a long poll of user in, its slot expiring at until:
// ok is false, and nothing is written, when the user already has max long
// polls in progress (max <= 0: no limit). ReleaseLongPoll gives the slot
// back when the poll ends.
func (e *Engine) TakeLongPoll(ctx context.Context, user int64, max int, until time.Time) (id int64, ok bool, err error) {
	return e.db.TakeLongPoll(ctx, user, max, until)
}

// ReleaseLongPoll gives a long poll's slot back.
func (e *Engine) ReleaseLongPoll(ctx context.Context, id int64) error {
	return e.db.ReleaseLongPoll(ctx, id)
}
