package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// failCurrent has BOINC give up on the chain's current step 0 work unit,
// and the creator make what is due; it returns the work unit that failed.
func (f *fixture) failCurrent(chainID int64, mask int) string {
	f.t.Helper()
	s, err := f.e.State().StepOf(f.ctx, store.Chain{ID: chainID}, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: mask, WUName: s.WU, WUID: 3}); err != nil {
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
	_, atts, err := f.e.State().ChainSteps(f.ctx, id)
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

// -resume with a corrected input: the restarted step reads it (uploaded
// as any input, only when the server lacks it), and so do the later steps
// where no output feeds that input; inputs fed by outputs come from the
// outputs again. What the chains cannot take is refused, nothing changed.
func TestResumeWithNewInputs(t *testing.T) {
	f := newFixture(t)
	f.e.Cfg.MaxStepAttempts = 1
	up, refs := f.upload("1 2 3\n", "0 0 0\n", "fail 1\n")
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up, Options: wire.Options{NumSteps: 2},
		Chains: []wire.ChainSpec{{Name: "c1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1], "conf_file": refs[2]}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := st2id(t, f, resp.Chains[0].FirstWU)
	ref := wire.ChainRef{Group: "g", Name: "c1"}

	// A running chain takes no new inputs.
	up2, fixed := f.upload("steps 5\n")
	if _, err := f.e.Resume(f.ctx, f.u, wire.ResumeRequest{ChainRef: ref, Upload: up2, Files: map[string]wire.FileRef{"conf_file": fixed[0]}}); engine.KindOf(err) != engine.KindBadRequest ||
		!strings.Contains(err.Error(), "no stopped, failed or aborted chain") {
		t.Fatalf("new inputs for a running chain: %v", err)
	}
	f.failCurrent(id, 2)
	if st, _ := f.e.Status(f.ctx, f.u, "g", "c1"); st.Chains[0].State != wire.StateFailed {
		t.Fatalf("after the failure: %+v", st.Chains[0])
	}
	// Refused: a parameter the queue lacks; a content neither uploaded
	// nor on the server. The chain stays failed.
	for _, c := range []struct {
		files map[string]wire.FileRef
		kind  engine.Kind
		want  string
	}{
		{map[string]wire.FileRef{"nosuch": fixed[0]}, engine.KindBadRequest, "has no parameter -nosuch"},
		{map[string]wire.FileRef{"conf_file": {MD5: md5s("never sent\n"), Size: 11}}, engine.KindMissingContent, "neither on the server nor in the upload"},
	} {
		_, err := f.e.Resume(f.ctx, f.u, wire.ResumeRequest{ChainRef: ref, Files: c.files})
		if engine.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resume with %v: %v, want %q", c.files, err, c.want)
		}
	}
	if st, _ := f.e.Status(f.ctx, f.u, "g", "c1"); st.Chains[0].State != wire.StateFailed {
		t.Fatalf("a refused resume changed the chain: %+v", st.Chains[0])
	}

	r, err := f.e.Resume(f.ctx, f.u, wire.ResumeRequest{ChainRef: ref, Upload: up2, Files: map[string]wire.FileRef{"conf_file": fixed[0]}})
	if err != nil || r.Count != 1 || r.Message != "resumed 1 chain" {
		t.Fatalf("resume with a corrected input: %+v, %v", r, err)
	}
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		t.Fatal(err)
	}
	s0, err := f.e.State().StepOf(f.ctx, store.Chain{ID: id}, 0)
	if err != nil || s0.State != "queued" || f.boincWUs(s0.WU) != 1 {
		t.Fatalf("the resumed step: %+v, %v", s0, err)
	}
	if s0.Inputs[1] != refs[0].MD5 || s0.Inputs[2] != refs[1].MD5 || s0.Inputs[3] != fixed[0].MD5 {
		t.Fatalf("the resumed step reads %v; want coordinates and velocities as before and the new conf %s", s0.Inputs, fixed[0].MD5)
	}
	// The next step: outputs where outputs feed, the new conf still.
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: s0.WU, Files: f.outputs(s0.WU)}); err != nil {
		t.Fatal(err)
	}
	s1, err := f.e.State().StepOf(f.ctx, store.Chain{ID: id}, 1)
	if err != nil || s1.Inputs[1] != md5s("4 5 6\n") || s1.Inputs[3] != fixed[0].MD5 {
		t.Fatalf("step 1 reads %v (%v); want the outputs and the new conf", s1.Inputs, err)
	}
}
