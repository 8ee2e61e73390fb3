package server

import (
	"context"
	"time"

	"github.com/rboinc/rboinc/internal/store"
)

// A long poll of the events feed holds a worker of the web server (under
// CGI, a process) for up to maxEventWait, so one user may have only
// max_user_long_polls of them in progress. They are counted in the state
// database (store.TakeLongPoll), the one place every CGI process and
// every host sees.

// longPollGrace is how long after its wait a poll's slot outlives a
// process killed before it could give it back.
const longPollGrace = 15 * time.Second

// longPollRetry is the Retry-After of a refused poll, in seconds.
const longPollRetry = 5

// longPoll is a slot taken; nil when the cap is off.
type longPoll struct{ id int64 }

// takeLongPoll takes one of u's slots for a poll waiting up to wait;
// refused when u has none left.
func (s *Server) takeLongPoll(ctx context.Context, u store.User, wait time.Duration) (slot *longPoll, refused bool, err error) {
	max := s.E.Cfg.MaxUserLongPolls
	if max <= 0 {
		return nil, false, nil
	}
	id, ok, err := s.E.TakeLongPoll(ctx, u.ID, max, time.Now().Add(wait+longPollGrace))
	if err != nil || !ok {
		return nil, !ok && err == nil, err
	}
	return &longPoll{id: id}, false, nil
}

// release gives the slot back, also when the request's context ended
// (the client went away).
func (p *longPoll) release(s *Server) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.E.ReleaseLongPoll(ctx, p.id); err != nil {
		s.Log.Warn("giving a long poll's slot back (it frees itself when it expires)", "err", err)
	}
}
