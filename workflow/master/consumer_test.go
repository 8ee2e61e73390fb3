package master_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/master"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestMasterTakesOnlyItsOwn: two masters of one user with tags of their
// own, and a chain submitted as rboinc-submit does, all finished at once:
// each master is told of, downloads and acknowledges only its own work
// units' results and counts only them; the other chain's results stay on
// the server for rboinc-retrieve.
func TestMasterTakesOnlyItsOwn(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{NoCompute: true})
	tok, err := s.AddUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(tag string) *master.Master {
		dir := t.TempDir()
		m, err := master.Connect(ctx, s.URL, tok, master.Options{Tag: tag, Dir: filepath.Join(dir, "results"), StateFile: filepath.Join(dir, "state.json")})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := open("a"), open("b")
	if err := a.Submit(ctx, a.NewWU("langevin", "x", inputs())); err != nil {
		t.Fatal(err)
	}
	if err := b.Submit(ctx, b.NewWU("langevin", "y", inputs())); err != nil {
		t.Fatal(err)
	}
	// rboinc-submit's way: no consumer named.
	c := a.Client()
	q, err := c.Queue(ctx, "langevin")
	if err != nil {
		t.Fatal(err)
	}
	chains, err := client.BuildChains(q, nil, []client.Job{{Name: "r", Files: inputs(), Line: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitChains(ctx, client.SubmitInput{Queue: "langevin", Group: "sci", Options: wire.Options{NumSteps: 1}, Chains: chains}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Finish(ctx); err != nil || n != 3 {
		t.Fatalf("finished %d: %v", n, err)
	}
	for _, m := range []struct {
		m   *master.Master
		tag string
	}{{a, "a"}, {b, "b"}} {
		evs := collect(t, m.m, 30*time.Second, func(evs []*master.Event) bool { return nKinds(evs, "chain_done") >= 1 })
		// Whatever else came: nothing may be another's.
		if _, err := m.m.Process(ctx, 2*time.Second, func(e *master.Event) error { evs = append(evs, e); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Tag != m.tag {
				t.Errorf("master %s was given event %v of another", m.tag, e)
			}
		}
		if n := count(evs, master.EventResult); n != 1 {
			t.Fatalf("master %s: %d results, want 1: %v", m.tag, n, evs)
		}
		for _, e := range evs {
			if e.Type == master.EventResult && len(e.Result.Files) != 3 {
				t.Errorf("master %s: its result %v came with %d files, want 3", m.tag, e, len(e.Result.Files))
			}
		}
		if n, err := m.m.Count(ctx, master.StateFinished); err != nil || n != 1 {
			t.Errorf("master %s counts %d finished work units (%v), want its one", m.tag, n, err)
		}
	}
	// rboinc-submit's results wait for rboinc-retrieve, whole.
	rep, err := c.Retrieve(ctx, client.RetrieveInput{Group: "sci", Dir: t.TempDir()})
	if err != nil || rep.Retrieved != 3 || rep.Acknowledged != 3 {
		t.Fatalf("rboinc-retrieve of group sci: %+v, %v; want its 3 files", rep, err)
	}
	// And a master is refused a tag that holds them.
	wu := a.NewWU("langevin", "z", inputs())
	wu.Tag = "sci"
	if err := a.Submit(ctx, wu); err == nil {
		t.Error("a master submitted into rboinc-submit's group")
	}
}
