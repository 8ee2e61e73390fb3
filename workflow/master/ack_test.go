package master_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestAcknowledgement: an event whose handler fails comes again; an
// acknowledged one never does, also not to a master started afresh on
// the same state file; Wait hands out events one by one until Ack; a
// damaged state file is refused with advice.
func TestAcknowledgement(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{NoCompute: true})
	tok, err := s.AddUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	opts := master.Options{Dir: filepath.Join(dir, "results"), StateFile: filepath.Join(dir, "state.json")}
	m, err := master.Connect(ctx, s.URL, tok, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Submit(ctx, m.NewWU("langevin", "x", inputs()), m.NewWU("langevin", "y", inputs())); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Finish(ctx); err != nil || n != 2 {
		t.Fatalf("finished %d: %v", n, err)
	}
	// The first result's handler fails: Process stops there.
	boom := errors.New("boom")
	var seen []int64
	n, err := m.Process(ctx, 5*time.Second, func(e *master.Event) error {
		if e.Type == master.EventResult {
			return boom
		}
		seen = append(seen, e.ID)
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Process = %d, %v; want the handler's error", n, err)
	}
	failedAfter := m.LastAcked()
	// It comes again, and the rest after it.
	var again []*master.Event
	if _, err := m.Process(ctx, 5*time.Second, func(e *master.Event) error { again = append(again, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(again) == 0 || again[0].Type != master.EventResult || again[0].ID != failedAfter+1 {
		t.Fatalf("after the failed handler: %v (acknowledged up to %d)", again, failedAfter)
	}
	if count(again, master.EventResult) != 2 {
		t.Fatalf("want both results: %v", again)
	}
	last := m.LastAcked()

	// A master started again on the state file gets nothing acknowledged.
	m2, err := master.Connect(ctx, s.URL, tok, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m2.LastAcked() != last {
		t.Fatalf("restarted at %d, want %d", m2.LastAcked(), last)
	}
	if err := m2.Submit(ctx, m2.NewWU("langevin", "z", inputs())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	var got []*master.Event
	for count(got, master.EventResult) < 1 {
		e, err := m2.Wait(ctx, 5*time.Second)
		if err != nil || e == nil {
			t.Fatalf("Wait: %v, %v (after %v)", e, err, got)
		}
		if e.ID <= last {
			t.Fatalf("acknowledged event %v delivered again", e)
		}
		got = append(got, e)
		if e.Type == master.EventResult {
			if e.Name != "z" {
				t.Fatalf("result of %s, want z", e.Name)
			}
			// Not acknowledged: a third master gets it again.
			m3, err := master.Connect(ctx, s.URL, tok, opts)
			if err != nil {
				t.Fatal(err)
			}
			e3, err := m3.Wait(ctx, 5*time.Second)
			if err != nil || e3 == nil || e3.ID > e.ID {
				t.Fatalf("before Ack, a new master's first event: %v, %v", e3, err)
			}
			if err := m2.Ack(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if m2.LastAcked() != got[len(got)-1].ID {
		t.Errorf("acknowledged up to %d, want %d", m2.LastAcked(), got[len(got)-1].ID)
	}
	if res, err := m2.Client().ResultsFor(ctx, wire.ConsumerMaster, "master", ""); err != nil || len(res.Files) != 0 {
		t.Errorf("the server keeps %d result files after their acknowledgement (%v)", len(res.Files), err)
	}

	if err := os.WriteFile(opts.StateFile, []byte(`{"last_event_id": 3`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := master.Connect(ctx, s.URL, tok, opts); err == nil {
		t.Error("a damaged state file was taken")
	}
}
