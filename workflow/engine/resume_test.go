package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/boinc"
	"github.com/rboinc/rboinc/workflow/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// failCurrent has BOINC give up on the chain's current step 0 work unit,
// and the creator make what is due; it returns the work unit that failed.
func (f *fixture) failCurrent(chainID int64, mask int) string {
	f.t.Helper()
	s, err := f.e.DB.StepOf(f.ctx, store.Chain{ID: chainID}, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.e.Advance(f.ctx, boinc.HookCall{Error: true, ErrorMask: mask, WUName: s.WU, WUID: 3}); err != nil {
		f.t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the retry's back-off
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	return s.WU
}

// After a resume, a step's earlier attempts are listed in the order they
// happened (the resumed run's after the first run's, though its attempts
// count from 1 again), each with the reason it ended with: the attempt the
// chain failed in keeps BOINC's reason, not the resume's.
func TestResumedAttemptsInOrderWithTheirReasons(t *testing.T) {
	f := newFixture(t)
	f.e.Cfg.RetryBackoff = 0.001
	f.e.Cfg.MaxStepAttempts = 2
	wu0 := f.submit("g", "c1", 2).Chains[0].FirstWU
	id := st2id(t, f, wu0)
	f.failCurrent(id, 8)         // run 1, attempt 1: retried
	last := f.failCurrent(id, 2) // run 1, attempt 2: the chain fails
	st, _ := f.e.Status(f.ctx, f.u, "g", "c1")
	if st.Chains[0].State != wire.StateFailed {
		t.Fatalf("after two failures: %+v", st.Chains[0])
	}
	failedWith := st.Chains[0].Error
	if _, err := f.e.Resume(f.ctx, f.u, wire.ResumeRequest{ChainRef: wire.ChainRef{Group: "g", Name: "c1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		t.Fatal(err)
	}
	second := f.failCurrent(id, 8) // run 2, attempt 1
	_, atts, err := f.e.DB.ChainSteps(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range atts {
		got = append(got, a.WU)
	}
	if len(atts) != 3 || atts[0].WU != wu0 || atts[1].WU != last || atts[2].WU != second {
		t.Fatalf("earlier attempts %v, want %v", got, []string{wu0, last, second})
	}
	if atts[1].Attempt != 2 || atts[1].Reason != failedWith || !strings.Contains(atts[1].Reason, "error mask 2") {
		t.Errorf("the attempt the chain failed in: %+v; want attempt 2 with the chain's reason %q", atts[1], failedWith)
	}
	if atts[2].Attempt != 1 || !strings.Contains(atts[2].Reason, "attempt 1 of 2 failed") {
		t.Errorf("the resumed run's first attempt: %+v", atts[2])
	}
	for _, a := range atts {
		if strings.Contains(a.Reason, "resume") {
			t.Errorf("attempt %s has the resume as its reason: %q", a.WU, a.Reason)
		}
	}
}
