package server_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestEventsLongPoll: the events feed answers a waiting poll soon after a
// transition (within 100 ms), gives each
// user only their own events, and refuses requests without credentials.
func TestEventsLongPoll(t *testing.T) {
	v := newEnv(t)
	if a := v.call("", "GET", "/rboinc_cgi"+wire.PathEvents+"?after=0", nil); a.status != 401 {
		t.Fatalf("without credentials: %s", a)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathEvents+"?after=-3", nil); a.status != 400 {
		t.Errorf("negative after: %s", a)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathEvents+"?after=0&wait=soon", nil); a.status != 400 {
		t.Errorf("bad wait: %s", a)
	}
	v.submit("alice", "g", "c1", 3)
	var start wire.EventsResponse
	a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathEvents, nil)
	if err := json.Unmarshal([]byte(a.body), &start); err != nil || !a.ok() || len(start.Events) != 0 || start.LastID == 0 {
		t.Fatalf("starting point: %s", a)
	}
	type polled struct {
		resp wire.EventsResponse
		at   time.Time
		err  error
	}
	got := make(chan polled, 1)
	go func() {
		a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathEvents+"?after="+itoa(start.LastID)+"&wait=10s", nil)
		var r wire.EventsResponse
		err := json.Unmarshal([]byte(a.body), &r)
		got <- polled{r, time.Now(), err}
	}()
	time.Sleep(300 * time.Millisecond)
	// bob's transition wakes the watcher, but alice's poll gets nothing of it.
	v.submit("bob", "g", "b1", 2)
	time.Sleep(300 * time.Millisecond)
	select {
	case p := <-got:
		t.Fatalf("the poll answered with another user's events: %+v", p.resp)
	default:
	}
	stopped := time.Now()
	if a := v.post("alice", "/rboinc_cgi"+wire.PathStop, wire.ChainRef{Group: "g"}); !a.ok() {
		t.Fatal(a)
	}
	p := <-got
	if p.err != nil || len(p.resp.Events) == 0 || p.resp.Events[0].Type != "chain_stopped" || p.resp.Events[0].Name != "c1" {
		t.Fatalf("poll: %+v, %v", p.resp, p.err)
	}
	// Woken by the event, not by the end of its 10 s wait (the watcher
	// looks every 25 ms; half the wait leaves room for a loaded machine).
	if d := p.at.Sub(stopped); d > 5*time.Second {
		t.Errorf("the poll answered %v after the transition, want well before its 10 s wait ended", d)
	}
	for _, e := range p.resp.Events {
		if strings.HasPrefix(e.Name, "b") {
			t.Errorf("bob's event in alice's feed: %+v", e)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestEventsLastIDIsTheUsersOwn: last_id is the user's newest event, so
// another user's activity does not move it (it would tell alice how busy
// bob is); starting from it, alice still gets each of her new events.
func TestEventsLastIDIsTheUsersOwn(t *testing.T) {
	v := newEnv(t)
	feed := func(user, query string) wire.EventsResponse {
		t.Helper()
		a := v.call(user, "GET", "/rboinc_cgi"+wire.PathEvents+query, nil)
		var r wire.EventsResponse
		if !a.ok() || json.Unmarshal([]byte(a.body), &r) != nil {
			t.Fatalf("events as %s: %v", user, a)
		}
		return r
	}
	if r := feed("alice", ""); r.LastID != 0 {
		t.Fatalf("alice has no events, last_id %d", r.LastID)
	}
	v.submit("alice", "g", "c1", 3)
	start := feed("alice", "")
	mine := feed("alice", "?after=0")
	if len(mine.Events) == 0 || start.LastID != mine.Events[len(mine.Events)-1].ID || mine.LastID != start.LastID {
		t.Fatalf("alice's last_id %d, her events %+v (last_id %d)", start.LastID, mine.Events, mine.LastID)
	}
	for i := range 3 {
		v.submit("bob", "g", "b"+itoa(int64(i)), 2)
	}
	if a := v.post("bob", "/rboinc_cgi"+wire.PathStop, wire.ChainRef{Group: "g"}); !a.ok() {
		t.Fatal(a)
	}
	if r := feed("alice", ""); r.LastID != start.LastID {
		t.Fatalf("bob's events moved alice's last_id from %d to %d", start.LastID, r.LastID)
	}
	if r := feed("alice", "?after="+itoa(start.LastID)); len(r.Events) != 0 || r.LastID != start.LastID {
		t.Fatalf("after bob's events, alice's feed: %+v", r)
	}
	if b := feed("bob", ""); b.LastID <= start.LastID {
		t.Fatalf("bob's last_id %d, alice's %d", b.LastID, start.LastID)
	}
	// alice's next event comes after her last_id, and moves it.
	if a := v.post("alice", "/rboinc_cgi"+wire.PathStop, wire.ChainRef{Group: "g"}); !a.ok() {
		t.Fatal(a)
	}
	r := feed("alice", "?after="+itoa(start.LastID))
	if len(r.Events) == 0 || r.Events[0].Type != "chain_stopped" || r.LastID != r.Events[len(r.Events)-1].ID {
		t.Fatalf("alice's stop: %+v", r)
	}
}
