package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
)

// A notifier stopped as bin/stop stops it (its context ends) while a
// webhook call is in flight lets that call finish and records it sent: the
// receiver, which already has the event, does not get it again from the
// next notifier. Only a process killed outright repeats its in-flight call.
func TestNotifierStopLetsDeliveryInFlightFinish(t *testing.T) {
	defer engine.SetNotifyRetry(0)()
	f := newFixture(t)
	allowLoopback(f.e)
	var (
		mu      sync.Mutex
		got     []int64
		first   = make(chan struct{})
		release = make(chan struct{})
		once    sync.Once
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev store.NotifyPayload
		json.Unmarshal(body, &ev)
		mu.Lock()
		got = append(got, ev.ID)
		mu.Unlock()
		blocked := false
		once.Do(func() { blocked = true; close(first) })
		if blocked {
			<-release // the receiver has the event; its answer is on the way
		}
	}))
	defer srv.Close()
	if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook, Address: srv.URL, Events: store.DefaultNotifyEvents}); err != nil {
		t.Fatal(err)
	}
	runChains(f, "g", "a1")

	ctx, stop := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { f.e.RunNotifier(ctx, 10*time.Millisecond); close(done) }()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery came")
	}
	stop() // bin/stop
	time.Sleep(50 * time.Millisecond)
	close(release)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the notifier did not stop")
	}
	// The next notifier sends what is left.
	drain(t, f.e, 50)
	events, err := f.e.State().Events(f.ctx, f.u.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range got {
		seen[id]++
	}
	n := 0
	for _, e := range events {
		if e.Type != store.EvChainDone && e.Type != store.EvGroupDone {
			continue
		}
		n++
		if seen[e.ID] != 1 {
			t.Errorf("event %d (%s) reached the webhook %d times, want once (calls: %v)", e.ID, e.Type, seen[e.ID], got)
		}
	}
	if n == 0 {
		t.Fatal("no chain_done or group_done event")
	}
}
