package master_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
)

// withConf is inputs() with a langevin run configuration.
func withConf(t *testing.T, conf string) map[string]string {
	in := inputs()
	p := filepath.Join(t.TempDir(), "input.conf")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	in["conf_file"] = p
	return in
}

// TestSuspendResumeCancel: a suspended work unit makes no further step
// (its running step's result still comes) and counts as suspended; resumed,
// it runs to its end; a cancelled one is aborted and counted so; each
// change arrives as a state event.
func TestSuspendResumeCancel(t *testing.T) {
	// Alone: its cancel must reach the server within the cancelled step's
	// 3 s of work.
	s := standinserver.Start(t, standinserver.Options{})
	m := connect(t, s, "alice")
	ctx := context.Background()
	slow := withConf(t, "sleep 1\n")
	sus := m.NewWU("langevin", "sus", slow)
	sus.Steps = 3
	can := m.NewWU("langevin", "can", withConf(t, "sleep 3\n"))
	if err := m.Submit(ctx, sus, can); err != nil {
		t.Fatal(err)
	}
	if err := m.Suspend(ctx, sus); err != nil {
		t.Fatal(err)
	}
	if err := m.Cancel(ctx, can); err != nil {
		t.Fatal(err)
	}
	if sus.State != master.StateSuspended || can.State != master.StateAborted {
		t.Errorf("states after the calls: %s, %s", sus.State, can.State)
	}
	evs := collect(t, m, 30*time.Second, func(evs []*master.Event) bool {
		return nKinds(evs, "chain_stopped") == 1 && nKinds(evs, "chain_aborted") == 1 && count(evs, master.EventResult) >= 1
	})
	for _, e := range evs {
		if e.Kind == "chain_stopped" && (e.Name != "sus" || e.State != master.StateSuspended || e.Type != master.EventState) {
			t.Errorf("stop event: %+v", e)
		}
		if e.Kind == "chain_aborted" && (e.Name != "can" || e.State != master.StateAborted) {
			t.Errorf("abort event: %+v", e)
		}
		if e.Type == master.EventResult && e.Name != "sus" {
			t.Errorf("a result of the cancelled work unit: %v", e)
		}
	}
	// The running step finished; no second step follows while suspended.
	time.Sleep(2 * time.Second)
	more := collect(t, m, 5*time.Second, func([]*master.Event) bool { return true })
	if n, err := m.Process(ctx, time.Second, func(e *master.Event) error { more = append(more, e); return nil }); err != nil {
		t.Fatal(err, n)
	}
	if nKinds(more, "step_created") != 0 || count(append(evs, more...), master.EventResult) != 1 {
		t.Fatalf("a suspended work unit went on: %v then %v", evs, more)
	}
	n, err := m.Counts(ctx, "")
	if err != nil || n[master.StateSuspended] != 1 || n[master.StateAborted] != 1 {
		t.Fatalf("counts %v, %v", n, err)
	}
	if err := m.Resume(ctx, sus); err != nil {
		t.Fatal(err)
	}
	evs = collect(t, m, 60*time.Second, func(evs []*master.Event) bool { return nKinds(evs, "chain_done") == 1 })
	if nKinds(evs, "chain_resumed") != 1 || count(evs, master.EventResult) != 2 {
		t.Errorf("after resuming: %v", evs)
	}
	if n, _ := m.Count(ctx, master.StateFinished); n != 1 {
		t.Errorf("finished: %d, want 1", n)
	}
}

// TestFailureHasReason: a work unit whose application fails arrives as a
// failure event saying why, in the application's words.
func TestFailureHasReason(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	// One failed result ends a BOINC work unit, quickly.
	s := standinserver.Start(t, standinserver.Options{Settings: map[string]any{"max_total_results": 1, "max_error_results": 1, "retry_backoff": 0.2}})
	m := connect(t, s, "alice")
	wu := m.NewWU("langevin", "bad", withConf(t, "fail 1\n"))
	wu.Options.MaxAttempts = 1
	if err := m.Submit(context.Background(), wu); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, m, 60*time.Second, func(evs []*master.Event) bool { return count(evs, master.EventFailure) == 1 })
	for _, e := range evs {
		if e.Type != master.EventFailure {
			continue
		}
		if e.Name != "bad" || e.State != master.StateAborted || !strings.Contains(e.Reason, "configured to fail") {
			t.Errorf("failure event %+v; want the application's message in its reason", e)
		}
	}
	if n, _ := m.Count(context.Background(), master.StateAborted); n != 1 {
		t.Errorf("aborted: %d, want 1", n)
	}
}

// TestUsersSeeOnlyTheirOwn: the masters of two users get only the events
// and counts of their own work units, and cannot touch the other's.
func TestUsersSeeOnlyTheirOwn(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{})
	ctx := context.Background()
	alice, bob := connect(t, s, "alice"), connect(t, s, "bob")
	if err := alice.Submit(ctx, alice.NewWU("langevin", "a1", inputs()), alice.NewWU("langevin", "a2", inputs())); err != nil {
		t.Fatal(err)
	}
	if err := bob.Submit(ctx, bob.NewWU("langevin", "b1", inputs())); err != nil {
		t.Fatal(err)
	}
	ae := collect(t, alice, 60*time.Second, func(evs []*master.Event) bool { return nKinds(evs, "chain_done") == 2 })
	be := collect(t, bob, 60*time.Second, func(evs []*master.Event) bool { return nKinds(evs, "chain_done") == 1 })
	for _, e := range ae {
		if e.Name != "" && !strings.HasPrefix(e.Name, "a") {
			t.Errorf("alice got %v", e)
		}
	}
	for _, e := range be {
		if e.Name != "" && !strings.HasPrefix(e.Name, "b") {
			t.Errorf("bob got %v", e)
		}
	}
	if n, _ := alice.Count(ctx, master.StateFinished); n != 2 {
		t.Errorf("alice's finished: %d", n)
	}
	if n, _ := bob.Count(ctx, master.StateFinished); n != 1 {
		t.Errorf("bob's finished: %d", n)
	}
	if err := bob.Cancel(ctx, &master.WU{Tag: "master", Name: "a1"}); err == nil {
		t.Error("bob cancelled alice's work unit")
	}
}
