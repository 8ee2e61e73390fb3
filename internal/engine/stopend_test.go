package engine_test

import (
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestChainStoppedDuringLastStepEndsDone: a chain stopped while its last
// step is in BOINC ends done when that step comes back through the hook
// (with its chain_done event), since the stop has nothing left to hold
// back; a chain stopped with steps left stays stopped.
func TestChainStoppedDuringLastStepEndsDone(t *testing.T) {
	f := newFixture(t)
	wus := map[string]string{
		"last": f.submit("g", "last", 1).Chains[0].FirstWU,
		"more": f.submit("g", "more", 2).Chains[0].FirstWU,
	}
	for name := range wus {
		if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "g", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"last", "more"} {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wus[name], Files: f.outputs(wus[name])}); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"last": wire.StateDone, "more": wire.StateStopped} {
		st, err := f.e.Status(f.ctx, f.u, "g", name)
		if err != nil {
			t.Fatal(err)
		}
		if c := st.Chains[0]; c.State != want {
			t.Errorf("chain %s, stopped during its step 0, is %s after the step came back: want %s", name, c.State, want)
		}
	}
	evs, err := f.e.State().Events(f.ctx, f.u.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var doneEvents []string
	for _, ev := range evs {
		if ev.Type == store.EvChainDone {
			doneEvents = append(doneEvents, ev.Name)
		}
	}
	if len(doneEvents) != 1 || doneEvents[0] != "last" {
		t.Errorf("chain_done events for %v: want one, for chain last", doneEvents)
	}
}

// TestStatusStepInFlightOfStoppedChain: a chain stopped while its step is
// in BOINC says so in its status (step_in_flight), until the step comes
// back: rboinc-retrieve -follow started after the stop waits for that
// step's files and group_done; before, it saw no running chain and ended
// at once.
func TestStatusStepInFlightOfStoppedChain(t *testing.T) {
	f := newFixture(t)
	wu := f.submit("g", "more", 2).Chains[0].FirstWU
	if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "g", Name: "more"}); err != nil {
		t.Fatal(err)
	}
	inFlight := func() bool {
		t.Helper()
		st, err := f.e.Status(f.ctx, f.u, "g", "more")
		if err != nil {
			t.Fatal(err)
		}
		if c := st.Chains[0]; c.State != wire.StateStopped {
			t.Fatalf("chain is %s, want stopped", c.State)
		}
		return st.Chains[0].StepInFlight
	}
	if !inFlight() {
		t.Error("a stopped chain whose step is in BOINC: step_in_flight not set")
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
		t.Fatal(err)
	}
	if inFlight() {
		t.Error("a stopped chain whose step came back (the next one held): step_in_flight still set")
	}
}
