package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
)

// TestTraceEvents: the account of missing events runs on a real state
// database and tells a queued event, one not queued yet and one never
// recorded apart.
func TestTraceEvents(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.AddUser(ctx, "soak1", "hash")
	if err != nil {
		t.Fatal(err)
	}
	u := store.User{ID: id, Name: "soak1"}
	if err := db.AddNotifyTargets(ctx, []store.NotifyTarget{{UserID: id, Kind: store.NotifyWebhook, Address: "http://127.0.0.1:1/x",
		Events: []string{"all"}}}, 0); err != nil {
		t.Fatal(err)
	}
	var ncs []store.NewChain
	for _, name := range []string{"a", "b"} {
		ncs = append(ncs, store.NewChain{Chain: store.Chain{Group: "g", Name: name, Queue: "q", App: "a", NSteps: 1, Params: "{}", Layout: "{}"}})
	}
	if _, err := db.CreateChains(ctx, u, ncs); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Stop(ctx, id, "g", "a", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FanOut(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Stop(ctx, id, "g", "b", "test"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	traceEvents(ctx, &b, db.SQL(), []string{"soak1/g/a/chain_stopped", "soak1/g/b/chain_stopped", "soak1/g//group_done"})
	out := b.String()
	for _, want := range []string{"soak1/g/a/chain_stopped: event ", "in the outbox: 0 attempts",
		"not queued yet", "soak1/g//group_done: not in the events table", "1 deliveries waiting"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
