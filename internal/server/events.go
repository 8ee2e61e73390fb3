package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/query"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Long polls of the events feed: GET events?after=ID&wait=30s answers as
// soon as the user has an event after ID, or when the wait is over. One
// watcher per server looks for new events (any process may add them: the
// hook, the assimilator, the creator) every eventLook while somebody
// waits, and wakes the waiters; each then reads its own events.
const (
	eventLook    = 25 * time.Millisecond
	maxEventWait = 60 * time.Second
	eventPage    = 1000
)

type eventFeed struct {
	mu       sync.Mutex
	users    map[int64]*userWait // the waiting users
	last     int64               // the newest event id the watcher has seen
	watching bool
	kicked   chan struct{} // a change was made in this process: look now
}

// kick has the watcher look at once (after a change this process made).
func (f *eventFeed) kick() {
	f.mu.Lock()
	if f.kicked == nil {
		f.kicked = make(chan struct{}, 1)
	}
	ch := f.kicked
	f.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

// userWait is one user's waiters: changed is closed at that user's next
// event.
type userWait struct {
	changed chan struct{}
	n       int
}

// wait returns a channel closed at the user's next event after seen (the
// newest event id the caller read before it looked at the user's events),
// after making sure the watcher runs.
func (f *eventFeed) wait(db *query.Reader, user, seen int64) (<-chan struct{}, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.users == nil {
		f.users = map[int64]*userWait{}
	}
	if !f.watching {
		f.watching = true
		f.last = seen
		go f.watch(db)
	}
	if seen < f.last {
		// The watcher went past events the caller has not looked at:
		// look again now.
		ch := make(chan struct{})
		close(ch)
		return ch, func() {}
	}
	uw := f.users[user]
	if uw == nil {
		uw = &userWait{changed: make(chan struct{})}
		f.users[user] = uw
	}
	uw.n++
	return uw.changed, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if uw.n--; uw.n == 0 && f.users[user] == uw {
			delete(f.users, user)
		}
	}
}

// watch looks for new events while anybody waits, and wakes the waiters of
// the users that have some: a thousand waiting polls cost one query per
// look, and an event wakes only its user's.
func (f *eventFeed) watch(db *query.Reader) {
	ctx := context.Background()
	t := time.NewTicker(eventLook)
	defer t.Stop()
	f.mu.Lock()
	if f.kicked == nil {
		f.kicked = make(chan struct{}, 1)
	}
	kicked := f.kicked
	f.mu.Unlock()
	for {
		select {
		case <-t.C:
		case <-kicked:
		}
		f.mu.Lock()
		if len(f.users) == 0 {
			f.watching = false
			f.mu.Unlock()
			return
		}
		from := f.last
		f.mu.Unlock()
		id, err := db.LastEventID(ctx)
		if err != nil || id <= from {
			continue
		}
		users, err := db.EventUsers(ctx, from, id)
		if err != nil {
			continue
		}
		f.mu.Lock()
		f.last = id
		for _, u := range users {
			if uw := f.users[u]; uw != nil {
				close(uw.changed)
				delete(f.users, u) // its waiters look again and register anew
			}
		}
		f.mu.Unlock()
	}
}

func (s *Server) events(w http.ResponseWriter, r *http.Request, u store.User) {
	q := r.URL.Query()
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			if secs, err2 := strconv.Atoi(v); err2 == nil {
				d, err = time.Duration(secs)*time.Second, nil
			}
		}
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "wait must be a duration such as 30s")
			return
		}
		wait = min(d, maxEventWait)
	}
	ctx := r.Context()
	var after int64 = -1 // none given: no events, only the newest id
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "after must be an event id (0 or more)")
			return
		}
		after = n
	}
	deadline := time.Now().Add(wait)
	var slot *longPoll
	defer func() { slot.release(s) }()
	for {
		resp := wire.EventsResponse{Events: []wire.Event{}}
		// The newest id of all, for the wait below only: the answer's
		// last_id is the user's own, so nobody learns how busy the
		// others are.
		last, err := s.E.Query().LastEventID(ctx)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if after >= 0 {
			evs, err := s.E.Query().Events(ctx, u.ID, after, eventPage)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			for _, e := range evs {
				resp.Events = append(resp.Events, wire.Event{ID: e.ID, Time: e.Time, Type: e.Type, Group: e.Group, Name: e.Name, Step: e.Step, Reason: e.Reason})
			}
		}
		left := time.Until(deadline)
		if len(resp.Events) > 0 || after < 0 || left <= 0 {
			if resp.LastID, err = s.E.Query().LastUserEventID(ctx, u.ID); err != nil {
				s.fail(w, r, err)
				return
			}
			if n := len(resp.Events); n > 0 {
				resp.LastID = max(resp.LastID, resp.Events[n-1].ID)
			}
			writeJSON(w, resp)
			return
		}
		if slot == nil {
			// About to wait: the poll takes one of the user's slots.
			var refused bool
			if slot, refused, err = s.takeLongPoll(ctx, u, left); err != nil {
				s.fail(w, r, err)
				return
			} else if refused {
				w.Header().Set("Retry-After", strconv.Itoa(longPollRetry))
				writeError(w, http.StatusTooManyRequests, wire.CodeTooManyRequests, fmt.Sprintf("user %s has %d long polls of the events feed in progress already, the most this server takes at once: end one, or poll without wait", u.Name, s.E.Cfg.MaxUserLongPolls))
				return
			}
		}
		ch, done := s.feed.wait(s.E.Query(), u.ID, last)
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			done()
			return
		}
		t.Stop()
		done()
	}
}
