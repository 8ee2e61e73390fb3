package engine_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
)

// hangingListener accepts TCP connections and never answers on them
// until hangUp (also at the end of the test): a notifier stopped while
// its calls hang waits for them (up to notifyTimeout, 15 s), so a test
// that is done with them hangs up first.
func hangingListener(t *testing.T) (url string, hangUp func()) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	hangUp = func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		conns = nil
		mu.Unlock()
	}
	t.Cleanup(hangUp)
	return "http://" + ln.Addr().String(), hangUp
}

// TestDeadTargetsOfOneUserDelayNoOtherUser: alice has 32 webhooks that
// accept the connection and never answer; bob's one webhook gets his
// event within a few seconds all the same, from the notifier as the
// server runs it.
func TestDeadTargetsOfOneUserDelayNoOtherUser(t *testing.T) {
	f := newFixture(t)
	allowLoopback(f.e)
	dead, hangUp := hangingListener(t)
	for i := range engine.DefaultMaxNotifyTargets {
		if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook,
			Address: fmt.Sprintf("%s/hook%d", dead, i), Events: []string{"all"}}); err != nil {
			t.Fatal(err)
		}
	}
	bobID, err := f.e.State().AddUser(f.ctx, "bob", "hash-bob")
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := f.e.State().NotifySecret(f.ctx, bobID)
	rc := &receiver{t: t, secret: secret}
	live := httptest.NewServer(rc)
	defer live.Close()
	if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: bobID, Kind: store.NotifyWebhook, Address: live.URL, Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	// Alice's events come first, so hers are the oldest deliveries.
	for i := range 3 {
		addEvent(t, f.e, f.u.ID, store.EvChainDone, "g", fmt.Sprintf("a%d", i))
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { f.e.RunNotifier(ctx, 50*time.Millisecond); close(done) }()
	defer func() { hangUp(); cancel(); <-done }()
	time.Sleep(300 * time.Millisecond) // alice's calls are hanging now
	start := time.Now()
	addEvent(t, f.e, bobID, store.EvChainDone, "b", "b1")
	for len(rc.ids()) == 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("bob's webhook got nothing in %v while alice's dead targets hang", time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("bob's event arrived after %v", time.Since(start).Round(time.Millisecond))
}

// TestTargetsPerUserCapped: a user's targets are bounded by
// max_notify_targets, whatever registers them; a refused submission
// registers none of its targets.
func TestTargetsPerUserCapped(t *testing.T) {
	f := newFixture(t)
	f.e.Cfg.MaxNotifyTargets = 3
	var ts []store.NotifyTarget
	for i := range 3 {
		ts = append(ts, store.NotifyTarget{UserID: f.u.ID, Group: "g", Kind: store.NotifyWebhook, Address: fmt.Sprintf("https://hooks.example.org/%d", i), Events: []string{"all"}})
	}
	if err := f.e.AddNotifyTargets(f.ctx, ts); err != nil {
		t.Fatal(err)
	}
	// The same targets again change their events: still three.
	if err := f.e.AddNotifyTargets(f.ctx, ts[:1]); err != nil {
		t.Fatal(err)
	}
	err := f.e.AddNotifyTargets(f.ctx, []store.NotifyTarget{{UserID: f.u.ID, Group: "h", Kind: store.NotifyWebhook, Address: "https://hooks.example.org/x", Events: []string{"all"}}})
	if engine.KindOf(err) != engine.KindQuota || !strings.Contains(err.Error(), "max_notify_targets") || !strings.Contains(err.Error(), "at most 3") {
		t.Fatalf("a fourth target: %v, want a quota error naming max_notify_targets", err)
	}
	f.submitNotify(t, "k", []string{"https://hooks.example.org/y"}, engine.KindQuota)
	if got, _ := f.e.State().NotifyTargets(f.ctx, f.u.ID); len(got) != 3 {
		t.Fatalf("%d targets, want 3", len(got))
	}
}
