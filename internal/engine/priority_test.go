package engine_test

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestSetPriority: a chain's new base priority reaches the work unit BOINC
// holds and the next steps' work units, within max_priority, for the
// user's own chains only. (That unsent results follow, and that the feeder
// sends by it, is the stand-in's TestLiveControl, on both engines.)
func TestSetPriority(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "a", 3).Chains[0].FirstWU
	other := f.submit("g", "b", 3).Chains[0].FirstWU
	bdb, err := f.e.OpenBoincDB(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	prio := func(wu string) int {
		t.Helper()
		var p int
		if err := bdb.QueryRow(`SELECT priority FROM workunit WHERE name = ?`, wu).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := prio(wu0); p != 1 {
		t.Fatalf("submitted with priority %d, want the default 1", p)
	}

	r, err := f.e.SetPriority(f.ctx, f.u, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "g", Name: "a"}, Priority: 50})
	if err != nil || r.Count != 1 || !strings.Contains(r.Message, "1 work unit changed in BOINC") {
		t.Fatalf("set: %+v %v", r, err)
	}
	if p := prio(wu0); p != 50 {
		t.Fatalf("the queued work unit has priority %d, want 50", p)
	}
	if p := prio(other); p != 1 {
		t.Fatalf("the chain not named changed to priority %d", p)
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu0, Files: f.outputs(wu0)}); err != nil {
		t.Fatal(err)
	}
	c, _, _ := f.e.State().StepByWU(f.ctx, wu0)
	s1, err := f.e.State().StepOf(f.ctx, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := prio(s1.WU); p != 49 {
		t.Fatalf("the next step's work unit has priority %d, want 49 (one less per step)", p)
	}

	// The whole group, and the server's limit.
	if r, err := f.e.SetPriority(f.ctx, f.u, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "g"}, Priority: -3}); err != nil || r.Count != 2 || prio(other) != -3 || prio(s1.WU) != -4 {
		t.Fatalf("whole group: %+v %v; priorities %d, %d", r, err, prio(other), prio(s1.WU))
	}
	f.e.Cfg.Limits.MaxPriority = 100
	if _, err := f.e.SetPriority(f.ctx, f.u, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "g"}, Priority: 101}); engine.KindOf(err) != engine.KindQuota {
		t.Fatalf("above max_priority: %v", err)
	}
	if p := prio(other); p != -3 {
		t.Fatalf("a refused change changed the priority to %d", p)
	}

	// Someone else's chains, or none: not found, nothing changed.
	bobID, err := f.e.State().AddUser(f.ctx, "bob", "hash-bob")
	if err != nil {
		t.Fatal(err)
	}
	bob := store.User{ID: bobID, Name: "bob"}
	if _, err := f.e.SetPriority(f.ctx, bob, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "g"}, Priority: 7}); engine.KindOf(err) != engine.KindNotFound {
		t.Fatalf("another user's group: %v", err)
	}
	if _, err := f.e.SetPriority(f.ctx, f.u, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "g", Name: "nosuch"}, Priority: 7}); engine.KindOf(err) != engine.KindNotFound {
		t.Fatalf("no such chain: %v", err)
	}
	if p := prio(other); p != -3 {
		t.Fatalf("refused requests changed the priority to %d", p)
	}
}
