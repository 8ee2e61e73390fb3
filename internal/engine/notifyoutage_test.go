package engine_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
)

// TestOutcomeRecordedAfterAnOutageLongerThanTheClaim: MariaDB is killed as
// the webhook answers and stays down for longer than the batch's claim;
// the notifier records the outcome once it is back, and the event is not
// sent again. Before, it gave up when the claim ended and the next pass
// sent the event a second time (16 events of the 1,000,000-work-unit run,
// MariaDB down from 07:15:58 to past their claim's end at 07:16:29).
func TestOutcomeRecordedAfterAnOutageLongerThanTheClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	db := startKillableMariaDB(t)
	stateDSN := db.newDatabase(t, "state")
	// A claim of 3 s: no call starts later than 0.9 s before its end.
	engine.SetNotifyTiming(t, 3, 300*time.Millisecond)
	root := t.TempDir()
	e, id := webhookEngine(t, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: "mysql://" + stateDSN})
	hook := &eventCounter{got: map[int64]int{}}
	var kill sync.Once
	serveWebhook(t, e, id, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook.ServeHTTP(w, r)
		kill.Do(func() {
			if err := db.kill(); err != nil {
				t.Error(err)
			}
		})
	}))
	addEvent(t, e, id, store.EvChainDone, "g", "c1")
	ctx := context.Background()
	passed := make(chan error, 1)
	go func() {
		_, err := e.NotifyPass(ctx)
		passed <- err
	}()
	time.Sleep(5 * time.Second) // the claim's end passes while MariaDB is down
	if err := db.start(); err != nil {
		t.Fatal(err)
	}
	if err := <-passed; err != nil {
		t.Fatal(err)
	}
	// The next passes (the database back) find nothing to send again.
	for deadline := time.Now().Add(20 * time.Second); ; {
		_, err := e.NotifyPass(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notifying with MariaDB back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := e.NotifyPass(ctx); err != nil {
		t.Fatal(err)
	}
	got := hook.counts()
	if len(got) != 1 {
		t.Fatalf("the webhook got %v, want its one event", got)
	}
	for ev, n := range got {
		if n != 1 {
			t.Errorf("event %d reached the webhook %d times, want once: its outcome was not recorded after MariaDB came back", ev, n)
		}
	}
}
