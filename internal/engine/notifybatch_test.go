package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
)

// callLog is a webhook endpoint that records each call's event in order,
// answers as answer says, and measures how many calls overlap.
type callLog struct {
	mu              sync.Mutex
	calls           []int64
	ends            []time.Time
	flying          int
	overlap         int // most calls in flight at once
	inflight, notes []string
	answer          func(call int, id int64) int
}

func (c *callLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev store.NotifyPayload
	json.Unmarshal(body, &ev)
	c.mu.Lock()
	c.calls = append(c.calls, ev.ID)
	n := len(c.calls)
	c.flying++
	c.overlap = max(c.overlap, c.flying)
	c.inflight = append(c.inflight, fmt.Sprintf("%d@%s", ev.ID, r.RemoteAddr))
	if c.flying > 1 {
		c.notes = append(c.notes, fmt.Sprintf("%s overlap %v", time.Now().Format("05.000"), c.inflight))
	}
	c.mu.Unlock()
	code := http.StatusOK
	if c.answer != nil {
		answered := make(chan struct{})
		go func() { code = c.answer(n, ev.ID); close(answered) }()
		select {
		case <-answered:
		case <-r.Context().Done(): // the caller gave up (its timeout): no longer in flight
			c.mu.Lock()
			c.flying--
			c.mu.Unlock()
			<-answered
			return
		}
	}
	c.mu.Lock()
	c.flying--
	c.inflight = slices.DeleteFunc(c.inflight, func(x string) bool { return x == fmt.Sprintf("%d@%s", ev.ID, r.RemoteAddr) })
	c.ends = append(c.ends, time.Now())
	c.mu.Unlock()
	w.WriteHeader(code)
}

func (c *callLog) got() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// batchFixture is an engine with one webhook target for all events of
// alice, n events waiting for it (their ids returned in order).
func batchFixture(t *testing.T, c http.Handler, n int) (*fixture, []int64) {
	t.Helper()
	f := newFixture(t)
	allowLoopback(f.e)
	serveWebhook(t, f.e, f.u.ID, c)
	for i := range n {
		addEvent(t, f.e, f.u.ID, store.EvStepDone, "g", fmt.Sprintf("c%d", i))
	}
	evs, err := f.e.State().Events(f.ctx, f.u.ID, 0, 10*n)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	if len(ids) != n {
		t.Fatalf("%d events, want %d", len(ids), n)
	}
	return f, ids
}

// A claim takes several of a target's deliveries and sends them in event
// order; one that fails ends the batch: those after it are not sent, and
// go, in order, after it once it is retried.
func TestNotifyBatchStopsAtAFailureInOrder(t *testing.T) {
	defer engine.SetNotifyRetry(0)()
	c := &callLog{answer: func(call int, _ int64) int {
		if call == 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}}
	f, ids := batchFixture(t, c, 8)
	if _, err := f.e.NotifyPass(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.got(); !slices.Equal(got, ids[:3]) {
		t.Fatalf("first pass called for %v, want the first three events in order, the third failing: %v", got, ids[:3])
	}
	if n, _, _ := f.e.State().OutboxWaiting(f.ctx); n != 6 {
		t.Fatalf("%d deliveries waiting after the first pass, want 6 (the failed one and the five after it)", n)
	}
	drain(t, f.e, 20)
	want := append(slices.Clone(ids[:3]), ids[2:]...)
	if got := c.got(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v (the failed one again, then the rest in order)", got, want)
	}
}

// A batch costs three write transactions (the fan-out, the claim, the
// outcome), not two a delivery (one more if the process lease's renewal,
// every 10 s, falls in).
func TestNotifyBatchOutcomeIsOneTransaction(t *testing.T) {
	c := &callLog{}
	f, ids := batchFixture(t, c, 16) // a claim's batch (engine.NotifyBatch)
	before := f.e.State().Commits()
	if _, err := f.e.NotifyPass(f.ctx); err != nil {
		t.Fatal(err)
	}
	commits := f.e.State().Commits() - before
	if got := c.got(); !slices.Equal(got, ids) {
		t.Fatalf("one pass called for %v, want every event in order: %v", got, ids)
	}
	if commits > 4 {
		t.Fatalf("%d deliveries took %d write transactions, want 3: the fan-out, the claim and the outcome", len(ids), commits)
	}
	if n, _, _ := f.e.State().OutboxWaiting(f.ctx); n != 0 {
		t.Fatalf("%d deliveries still waiting", n)
	}
}

// A notifier stopped mid-batch finishes the call in flight, sends no more,
// and hands the rest back at once: the next notifier (another process's)
// sends them right away, in order, each once.
func TestNotifyBatchStoppedMidwayHandsBackTheRest(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := &callLog{answer: func(call int, _ int64) int {
		if call == 2 {
			stop() // bin/stop while the second call is in flight
			time.Sleep(100 * time.Millisecond)
		}
		return http.StatusOK
	}}
	f, ids := batchFixture(t, c, 10)
	done := make(chan struct{})
	go func() { f.e.RunNotifier(ctx, 10*time.Millisecond); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the notifier did not stop")
	}
	if got := c.got(); !slices.Equal(got, ids[:2]) {
		t.Fatalf("the stopped notifier called for %v, want the first two events only: %v", got, ids[:2])
	}
	var claimed int
	if err := f.e.State().SQL().QueryRowContext(f.ctx, `SELECT count(*) FROM notify_outbox WHERE claimed_by != '' OR next_try > ?`,
		time.Now().Unix()).Scan(&claimed); err != nil {
		t.Fatal(err)
	}
	if claimed != 0 {
		t.Fatalf("%d deliveries still set aside after the notifier stopped, want none (handed back)", claimed)
	}
	next, err := engine.Open(f.ctx, f.root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	allowLoopback(next)
	drain(t, next, 10)
	if got := c.got(); !slices.Equal(got, ids) {
		t.Fatalf("calls %v, want each event once in order: %v", got, ids)
	}
}

// A batch to a slow receiver starts no call that could end after its claim
// ends: two notifiers (two processes) running side by side never post to
// the target at the same time, and every event reaches it in order (a call
// that timed out on a loaded machine may come again, right after itself).
func TestNotifyBatchKeepsToItsClaim(t *testing.T) {
	defer engine.SetNotifyRetry(0)()
	// A claim of 4 s starts calls in its first second (the last 3 call
	// timeouts are kept); a batch of 16 calls of 300 ms would outlast it.
	engine.SetNotifyTiming(t, 4, time.Second)
	c := &callLog{}
	c.answer = func(int, int64) int { time.Sleep(300 * time.Millisecond); return http.StatusOK }
	f, ids := batchFixture(t, c, 2*engine.NotifyBatch)
	other, err := engine.Open(f.ctx, f.root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	allowLoopback(other)
	ctx, stop := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	for _, e := range []*engine.Engine{f.e, other} {
		wg.Go(func() { e.RunNotifier(ctx, 20*time.Millisecond) })
	}
	ok := polled(60*time.Second, func() bool { return len(slices.Compact(c.got())) >= len(ids) })
	stop()
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.overlap != 1 {
		t.Errorf("%d calls to the target at once, want 1: %v", c.overlap, c.notes)
	}
	if got := slices.Compact(slices.Clone(c.calls)); !ok || !slices.Equal(got, ids) {
		t.Fatalf("calls %v, want each event in order: %v", c.calls, ids)
	}
}
