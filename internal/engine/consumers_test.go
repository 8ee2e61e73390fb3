package engine_test

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/workflow/wire"
)

// submitFor submits a one-step chain whose results go to consumer, or to
// the GAHP when batch is set, and finishes its step; it returns the step's
// work unit.
func (f *fixture) submitFor(consumer, group, name, batch string) (string, error) {
	f.t.Helper()
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	req := wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up, Consumer: consumer,
		Options: wire.Options{NumSteps: 1},
		Chains:  []wire.ChainSpec{{Name: name, Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}
	if batch != "" {
		req.Batch = &wire.BatchSpec{Name: batch}
		req.Chains[0].Job = name
	}
	resp, err := f.e.Submit(f.ctx, f.u, req)
	if err != nil {
		return "", err
	}
	wu := resp.Chains[0].FirstWU
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
		f.t.Fatal(err)
	}
	return wu, nil
}

// TestEachResultHasOneConsumer: the results of rboinc-submit's chains, of
// two masters' tags and of a GAHP batch, all of one user, are listed,
// handed and acknowledged only to their own consumer; another's gets a
// conflict and changes nothing; a group takes chains of one consumer.
func TestEachResultHasOneConsumer(t *testing.T) {
	f := newFixture(t)
	const retriever, master = wire.ConsumerRetriever, wire.ConsumerMaster
	wus := map[string]string{}
	for _, c := range []struct{ consumer, group, batch string }{
		{retriever, "sci", ""}, {master, "a", ""}, {master, "b", ""}, {retriever, "gahp", "condor#1"},
	} {
		wu, err := f.submitFor(c.consumer, c.group, "c1", c.batch)
		if err != nil {
			t.Fatalf("submitting to %s: %v", c.group, err)
		}
		wus[c.group] = wu
	}
	conflict := func(what string, err error) {
		t.Helper()
		if engine.KindOf(err) != engine.KindOtherConsumer {
			t.Errorf("%s: %v, want a conflict", what, err)
		}
	}
	// Each consumer lists its own groups, and is refused the others'.
	for group, own := range map[string]string{"sci": retriever, "a": master, "b": master, "gahp": wire.ConsumerBatch} {
		for _, asker := range []string{retriever, master} {
			res, err := f.e.ResultsFor(f.ctx, f.u, asker, group, "")
			if asker != own {
				conflict(asker+" lists "+group, err)
				if len(res.Files) != 0 {
					t.Errorf("%q was given %d files of group %s", asker, len(res.Files), group)
				}
				continue
			}
			if err != nil || len(res.Files) != 3 {
				t.Fatalf("%q lists its group %s: %d files, %v", asker, group, len(res.Files), err)
			}
			for _, rf := range res.Files {
				if own == master && !strings.HasSuffix(rf.Path, "?consumer=master") {
					t.Errorf("a master's download path %s does not name it", rf.Path)
				}
			}
		}
	}
	// The original protocol's listing is rboinc-retrieve's.
	if _, err := f.e.Results(f.ctx, f.u, "a", ""); engine.KindOf(err) != engine.KindOtherConsumer {
		t.Errorf("the Perl clients list a master's tag: %v", err)
	}
	// Downloads and acknowledgements of another's results are refused and
	// drop nothing.
	file := func(group string) string { return wus[group] + "_0" }
	if _, _, err := f.e.OpenResultFor(f.ctx, f.u, retriever, "a", file("a")); engine.KindOf(err) != engine.KindOtherConsumer {
		t.Errorf("rboinc-retrieve downloads a master's result: %v", err)
	}
	if r, _, err := f.e.OpenResultFor(f.ctx, f.u, master, "a", file("a")); err != nil {
		t.Errorf("a master downloads its result: %v", err)
	} else {
		r.Close()
	}
	if r, _, err := f.e.OpenResultFor(f.ctx, f.u, wire.ConsumerBatch, "gahp", file("gahp")); err != nil {
		t.Errorf("the GAHP downloads its batch's result: %v", err)
	} else {
		r.Close()
	}
	for _, c := range []struct{ asker, group string }{{master, "sci"}, {retriever, "a"}, {master, "gahp"}, {retriever, "gahp"}} {
		ack, err := f.e.Ack(f.ctx, f.u, wire.AckRequest{Group: c.group, Consumer: c.asker, Files: []string{file(c.group)}})
		conflict(c.asker+" acknowledges "+c.group, err)
		if ack.Count != 0 {
			t.Errorf("%q dropped %d files of %s", c.asker, ack.Count, c.group)
		}
	}
	for group, own := range map[string]string{"sci": retriever, "a": master} {
		if res, err := f.e.ResultsFor(f.ctx, f.u, own, group, ""); err != nil || len(res.Files) != 3 {
			t.Errorf("after the refused acknowledgements, group %s holds %d files (%v), want 3", group, len(res.Files), err)
		}
	}
	// Its own consumer acknowledges.
	if ack, err := f.e.Ack(f.ctx, f.u, wire.AckRequest{Group: "a", Consumer: master, Files: []string{file("a")}}); err != nil || ack.Count != 1 {
		t.Errorf("the master acknowledges its own: %+v, %v", ack, err)
	}
	// A group is one consumer's: nobody submits into another's.
	for _, c := range []struct{ consumer, group string }{{retriever, "a"}, {master, "sci"}, {master, "gahp"}} {
		_, err := f.submitFor(c.consumer, c.group, "c2", "")
		conflict(c.consumer+" submits to "+c.group, err)
	}
	// A master may add to its own tag, the retriever to its group.
	for _, c := range []struct{ consumer, group string }{{master, "a"}, {retriever, "sci"}} {
		if _, err := f.submitFor(c.consumer, c.group, "c3", ""); err != nil {
			t.Errorf("%q adds to its group %s: %v", c.consumer, c.group, err)
		}
	}
	// Only rboinc-retrieve and masters are consumers a client names.
	for _, bad := range []string{wire.ConsumerBatch, "other"} {
		if _, err := f.e.ResultsFor(f.ctx, f.u, bad, "gahp", ""); engine.KindOf(err) != engine.KindBadRequest {
			t.Errorf("consumer %q: %v, want a bad request", bad, err)
		}
		if _, err := f.submitFor(bad, "new"+bad, "c1", ""); engine.KindOf(err) != engine.KindBadRequest {
			t.Errorf("submitting as %q: %v, want a bad request", bad, err)
		}
	}
	if _, err := f.submitFor(master, "mb", "c1", "batch2"); engine.KindOf(err) != engine.KindBadRequest {
		t.Errorf("a master's batch: %v, want a bad request", err)
	}
}
