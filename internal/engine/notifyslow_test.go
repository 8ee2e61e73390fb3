package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
)

// TestSlowDeliveryKeepsItsClaim: a webhook call that outlasts the claim's
// lease (a slow receiver, a loaded machine) keeps its delivery: a second
// notifier (another host's) passing meanwhile does not send the event
// again, since the first renews its claim while the call is in flight.
func TestSlowDeliveryKeepsItsClaim(t *testing.T) {
	defer engine.SetNotifyLease(2)()
	ctx := context.Background()
	root := t.TempDir()
	e, id := webhookEngine(t, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: testStateDB(t)})
	other, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	hook := &eventCounter{got: map[int64]int{}}
	calls := make(chan struct{}, 10)
	var first sync.Once
	serveWebhook(t, e, id, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slow := false
		first.Do(func() { slow = true })
		calls <- struct{}{}
		if slow {
			time.Sleep(5 * time.Second) // more than twice the lease
		}
		hook.ServeHTTP(w, r)
	}))
	addEvent(t, e, id, store.EvChainDone, "g", "c1")
	done := make(chan error, 1)
	go func() {
		_, err := e.NotifyPass(ctx)
		done <- err
	}()
	select {
	case <-calls:
	case <-time.After(30 * time.Second):
		t.Fatal("the notifier made no webhook call")
	}
	// The other notifier passes while the first call is in flight, past
	// its first lease.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if _, err := other.NotifyPass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for ev, n := range hook.counts() {
		if n != 1 {
			t.Errorf("event %d received %d times, want once: its claim ran out while its call was in flight", ev, n)
		}
	}
	if len(hook.counts()) != 1 {
		t.Errorf("received %v, want the one event", hook.counts())
	}
}
