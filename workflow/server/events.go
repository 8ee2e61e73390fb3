package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rboinc/rboinc/workflow/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Long polls of the events feed: GET events?after=ID&wait=30s answers as
// soon as the user has an event after ID, or when the wait is over. One
// watcher per server looks for new events (any process may add them: the
// hook, the assimilator, the creator) every eventLook while somebody
// waits, and wakes the waiters; each then reads its own events.
const (
	eventLook    = 50 * time.Millisecond
	maxEventWait = 60 * time.Second
	eventPage    = 1000
)

type eventFeed struct {
	mu       sync.Mutex
	changed  chan struct{} // closed when the newest event id changes
	last     int64
	watching bool
	waiters  int
}

// wait returns a channel closed at the next new event, after making sure
// the watcher runs.
func (f *eventFeed) wait(db *store.DB) (<-chan struct{}, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	f.waiters++
	if !f.watching {
		f.watching = true
		go f.watch(db)
	}
	ch := f.changed
	return ch, func() {
		f.mu.Lock()
		f.waiters--
		f.mu.Unlock()
	}
}

// watch looks for new events while anybody waits.
func (f *eventFeed) watch(db *store.DB) {
	t := time.NewTicker(eventLook)
	defer t.Stop()
	for range t.C {
		id, err := db.LastEventID(context.Background())
		f.mu.Lock()
		if err == nil && id != f.last {
			f.last = id
			close(f.changed)
			f.changed = make(chan struct{})
		}
		if f.waiters == 0 {
			f.watching = false
			f.mu.Unlock()
			return
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
	for {
		resp := wire.EventsResponse{Events: []wire.Event{}}
		last, err := s.E.DB.LastEventID(ctx)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		resp.LastID = last
		if after >= 0 {
			evs, err := s.E.DB.Events(ctx, u.ID, after, eventPage)
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
			writeJSON(w, resp)
			return
		}
		ch, done := s.feed.wait(s.E.DB)
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
