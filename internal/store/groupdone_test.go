package store

import (
	"context"
	"testing"
)

// groupEvents lists the types of user u's events of group g, oldest first.
func groupEvents(t *testing.T, db *DB, u User, g string) []string {
	t.Helper()
	evs, err := db.Events(context.Background(), u.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Group == g {
			out = append(out, e.Type)
		}
	}
	return out
}

// TestGroupDoneOnceAfterTheLastStep: a group whose last chain is stopped
// while a step of it runs in BOINC is finished when that step's outputs
// are in, not at the stop: group_done comes once, after that step_done.
// Before, it came at the stop and again when the step ended the chain
// done, and rboinc-retrieve -follow ended at the first, before the step's
// files were there.
func TestGroupDoneOnceAfterTheLastStep(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	for _, tc := range []struct {
		group string
		steps int // 1: the stop comes during the last step
		want  []string
	}{
		{"last", 1, []string{EvChainStopped, EvStepDone, EvChainDone, EvGroupDone}},
		{"more", 2, []string{EvChainStopped, EvStepDone, EvGroupDone}},
	} {
		nc := batchChain(tc.group, "z", md5n(1))
		nc.NSteps = tc.steps
		cs, err := db.CreateChains(ctx, u, []NewChain{nc})
		if err != nil {
			t.Fatal(err)
		}
		c := cs[0]
		if err := db.SetStepState(ctx, []string{c.WU(0)}, StateQueued); err != nil {
			t.Fatal(err)
		}
		if n, err := db.Stop(ctx, u.ID, tc.group, "", "test"); err != nil || n != 1 {
			t.Fatalf("stop: %d, %v", n, err)
		}
		var next *Step
		if tc.steps > 1 {
			next = &Step{ChainID: c.ID, Step: 1, WU: c.WU(1), State: "creating", Inputs: []string{md5n(2)}}
		}
		if done, _, _, err := db.CompleteStep(ctx, c, 0, []Result{{ChainID: c.ID, Step: 0, File: c.WU(0) + "_0", MD5: md5n(3)}}, next); err != nil || !done {
			t.Fatalf("the step's end: %v, %v", done, err)
		}
		got := groupEvents(t, db, u, tc.group)
		got = got[1:] // step_created
		if len(got) != len(tc.want) {
			t.Errorf("group %s: events %v, want %v", tc.group, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("group %s: events %v, want %v", tc.group, got, tc.want)
				break
			}
		}
	}
	// A stopped chain whose step BOINC gave up on: that step leaves BOINC,
	// and with it the group is finished.
	nc := batchChain("retried", "z", md5n(1))
	cs, err := db.CreateChains(ctx, u, []NewChain{nc})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if err := db.SetStepState(ctx, []string{c.WU(0)}, StateQueued); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Stop(ctx, u.ID, "retried", "", "test"); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.RetryStep(ctx, c, 0, c.WU(0), c.WU(0)+"x", "failed", 0); err != nil || !ok {
		t.Fatalf("retry: %v %v", ok, err)
	}
	got := groupEvents(t, db, u, "retried")
	if n := len(got); n == 0 || got[n-1] != EvGroupDone || countOf(got, EvGroupDone) != 1 {
		t.Errorf("a stopped chain's step retried: events %v, want one group_done, last", got)
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestGroupDoneAfterPurgeOfStoppedChain: a group whose last chain was
// stopped while a step of it ran in BOINC, then purged, is finished at the
// purge: nothing more is to come (the step's outputs are dropped), and the
// stop left group_done to that step's end, which now records nothing.
// Without group_done at the purge the group never had one, and
// rboinc-retrieve -follow waited forever. A purge of a group finished
// already adds none.
func TestGroupDoneAfterPurgeOfStoppedChain(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	for _, tc := range []struct {
		group  string
		queued bool // the step is in BOINC at the stop
	}{{"inboinc", true}, {"finished", false}} {
		cs, err := db.CreateChains(ctx, u, []NewChain{batchChain(tc.group, "z", md5n(1))})
		if err != nil {
			t.Fatal(err)
		}
		c := cs[0]
		if tc.queued {
			if err := db.SetStepState(ctx, []string{c.WU(0)}, StateQueued); err != nil {
				t.Fatal(err)
			}
			if n, err := db.Stop(ctx, u.ID, tc.group, "", "test"); err != nil || n != 1 {
				t.Fatalf("stop: %d, %v", n, err)
			}
		} else if err := db.FailChain(ctx, c.ID, -1, "test"); err != nil {
			t.Fatal(err) // group_done already
		}
		if _, _, err := db.Purge(ctx, u.ID, tc.group, ""); err != nil {
			t.Fatal(err)
		}
		// The purged chain's step ending in BOINC afterwards adds nothing.
		if _, _, _, err := db.CompleteStep(ctx, c, 0, []Result{{ChainID: c.ID, Step: 0, File: c.WU(0) + "_0", MD5: md5n(3)}}, nil); err != nil {
			t.Fatal(err)
		}
		got := groupEvents(t, db, u, tc.group)
		if countOf(got, EvGroupDone) != 1 {
			t.Errorf("group %s: events %v, want one group_done", tc.group, got)
		}
	}
}

// TestGroupDoneOnceWhenStopRacesCreator: a chain stopped while a creator
// makes its next step's work unit (read pending before the stop) has that
// step run to its end, so its group is finished then, not at the stop:
// group_done came at the stop and again at the step's end, and -follow
// ended before the step's files. A pending step the creator finds stopped
// is held for -resume, and that finishes the group.
func TestGroupDoneOnceWhenStopRacesCreator(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	for _, tc := range []struct {
		group         string
		stopAfterRead bool // the creator read the step before the stop
	}{{"raced", true}, {"before", false}} {
		nc := batchChain(tc.group, "z", md5n(1))
		nc.NSteps = 2
		cs, err := db.CreateChains(ctx, u, []NewChain{nc})
		if err != nil {
			t.Fatal(err)
		}
		c := cs[0]
		if err := db.SetStepState(ctx, []string{c.WU(0)}, StateQueued); err != nil {
			t.Fatal(err)
		}
		next := &Step{ChainID: c.ID, Step: 1, WU: c.WU(1), State: StatePending, Inputs: []string{md5n(2)}}
		if _, _, _, err := db.CompleteStep(ctx, c, 0, []Result{{ChainID: c.ID, Step: 0, File: c.WU(0) + "_0", MD5: md5n(3)}}, next); err != nil {
			t.Fatal(err)
		}
		if tc.stopAfterRead {
			ps, err := db.PendingSteps(ctx, 10)
			if err != nil || len(ps) != 1 {
				t.Fatalf("pending steps %v, %v", ps, err)
			}
		}
		if _, err := db.Stop(ctx, u.ID, tc.group, "", "test"); err != nil {
			t.Fatal(err)
		}
		if tc.stopAfterRead {
			if got := groupEvents(t, db, u, tc.group); countOf(got, EvGroupDone) != 0 {
				t.Errorf("group %s: events %v: group_done while a creator made its last step", tc.group, got)
			}
			// The creator made the work unit and records it.
			if err := db.QueuePending(ctx, c.WU(1)); err != nil {
				t.Fatal(err)
			}
			c.NSteps = 2
			if _, _, _, err := db.CompleteStep(ctx, c, 1, []Result{{ChainID: c.ID, Step: 1, File: c.WU(1) + "_0", MD5: md5n(4)}}, nil); err != nil {
				t.Fatal(err)
			}
		} else if ps, err := db.PendingSteps(ctx, 10); err != nil || len(ps) != 0 {
			t.Fatalf("pending steps of a stopped chain %v, %v", ps, err)
		}
		got := groupEvents(t, db, u, tc.group)
		if n := len(got); countOf(got, EvGroupDone) != 1 || got[n-1] != EvGroupDone {
			t.Errorf("group %s: events %v, want one group_done, last", tc.group, got)
		}
	}
}

// TestGroupDoneOnceWhenPurgeRacesCreatorsHold: a purge that lands between
// the creator's read of the pending steps (the chain stopped, its step
// pending: group_done kept back) and its holding of them finishes the
// group (group_done at the purge); the creator's holding then finds the
// chain purged and adds nothing. It held the purged chain's step and
// added a second group_done, from the state it had read before the purge.
func TestGroupDoneOnceWhenPurgeRacesCreatorsHold(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "z", md5n(1))})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if err := db.SetStepState(ctx, []string{c.WU(0)}, StateQueued); err != nil {
		t.Fatal(err)
	}
	next := &Step{ChainID: c.ID, Step: 1, WU: c.WU(1), State: StatePending, Inputs: []string{md5n(2)}}
	if _, _, _, err := db.CompleteStep(ctx, c, 0, []Result{{ChainID: c.ID, Step: 0, File: c.WU(0) + "_0", MD5: md5n(3)}}, next); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Stop(ctx, u.ID, "g", "", "test"); err != nil {
		t.Fatal(err)
	}
	if got := groupEvents(t, db, u, "g"); countOf(got, EvGroupDone) != 0 {
		t.Fatalf("events %v: group_done with a step pending", got)
	}
	afterPendingRead = func() {
		afterPendingRead = nil
		if _, _, err := db.Purge(ctx, u.ID, "g", ""); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterPendingRead = nil })
	if ps, err := db.PendingSteps(ctx, 10); err != nil || len(ps) != 0 {
		t.Fatalf("pending steps %+v, %v", ps, err)
	}
	if got := groupEvents(t, db, u, "g"); countOf(got, EvGroupDone) != 1 {
		t.Errorf("events %v, want one group_done", got)
	}
	var held int
	if err := db.queryRow(ctx, `SELECT count(*) FROM steps WHERE chain_id = ? AND state = 'held'`, c.ID).Scan(&held); err != nil || held != 0 {
		t.Errorf("%d held steps of the purged chain (%v)", held, err)
	}
}
