package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// Tests of the batched statements (one transaction and prepared
// statements per request, multi-row inserts, indexed lookups).

func openBatchDB(t *testing.T) (*DB, User) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	id, err := db.AddUser(ctx, "carol", "hash-carol")
	if err != nil {
		t.Fatal(err)
	}
	return db, User{ID: id, Name: "carol"}
}

func batchChain(group, name string, inputs ...string) NewChain {
	return NewChain{Chain: Chain{Group: group, Name: name, Queue: "q", App: "a", NSteps: 2, Params: "{}", Layout: "{}"}, Inputs: inputs}
}

func md5n(i int) string { return fmt.Sprintf("%032x", i) }

func TestCreateChainsKeepsInputOrder(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	var ncs []NewChain
	for i := 0; i < 50; i++ {
		ncs = append(ncs, batchChain("g", fmt.Sprint("c", i), md5n(i), "", md5n(1000), md5n(i+1)))
	}
	ncs = append(ncs, batchChain("g", "none")) // a queue without inputs
	created, err := db.CreateChains(ctx, u, ncs)
	if err != nil || len(created) != len(ncs) {
		t.Fatalf("created %d: %v", len(created), err)
	}
	for i, c := range created {
		_, s, err := db.StepByWU(ctx, c.WU(0))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Inputs, ncs[i].Inputs) {
			t.Fatalf("chain %s: inputs %v, want %v", c.Name, s.Inputs, ncs[i].Inputs)
		}
	}
	if err := db.SetStepState(ctx, []string{created[0].WU(0), created[1].WU(0)}, "queued"); err != nil {
		t.Fatal(err)
	}
	if s, _ := db.StepOf(ctx, created[1], 0); s.State != "queued" {
		t.Fatalf("state %s", s.State)
	}
	if s, _ := db.StepOf(ctx, created[2], 0); s.State != "creating" {
		t.Fatalf("state %s", s.State)
	}
	// A taken name fails the whole request and leaves nothing.
	_, err = db.CreateChains(ctx, u, []NewChain{batchChain("g", "new1", md5n(1)), batchChain("g", "c3", md5n(1))})
	if err == nil {
		t.Fatal("taken name accepted")
	}
	if cs, _ := db.Chains(ctx, u.ID, "g", "new1"); len(cs) != 0 {
		t.Fatal("a failed request left a chain")
	}
}

func TestTagsNotReusedAfterPurge(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	seen := map[string]bool{}
	for i := 0; i < 30; i++ {
		cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "same", md5n(1)), batchChain("g", fmt.Sprint("other", i), md5n(2))})
		if err != nil {
			t.Fatal(err)
		}
		if seen[cs[0].Tag] {
			t.Fatalf("tag %s reused for the same name", cs[0].Tag)
		}
		seen[cs[0].Tag] = true
		if _, _, err := db.Purge(ctx, u.ID, "g", "same"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAckOnlyTheGroupsFiles(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	other, err := db.AddUser(ctx, "dave", "hash-dave")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, owner := range []struct {
		u     User
		group string
	}{{u, "g"}, {u, "h"}, {User{ID: other, Name: "dave"}, "g"}} {
		cs, err := db.CreateChains(ctx, owner.u, []NewChain{batchChain(owner.group, "c", md5n(1))})
		if err != nil {
			t.Fatal(err)
		}
		f := cs[0].WU(0) + "_0"
		if _, _, _, err := db.CompleteStep(ctx, cs[0], 0, []Result{{ChainID: cs[0].ID, Step: 0, Index: 0, File: f, MD5: md5n(9), Size: 1}}, nil); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	gone, err := db.Ack(ctx, u.ID, "", "g", append(files, "nosuch_0"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gone, files[:1]) {
		t.Fatalf("acknowledged %v, want only %v", gone, files[:1])
	}
	if p, _ := db.PendingResults(ctx, u.ID, "h", ""); len(p) != 1 {
		t.Fatalf("group h lost its file: %v", p)
	}
	if p, _ := db.PendingResults(ctx, other, "g", ""); len(p) != 1 {
		t.Fatalf("dave lost his file: %v", p)
	}
	if _, err := db.PendingResult(ctx, u.ID, "", "g", files[0]); err != ErrNotFound {
		t.Fatalf("acknowledged file still pending: %v", err)
	}
	if p, err := db.PendingResult(ctx, u.ID, "", "h", files[1]); err != nil || p.File != files[1] {
		t.Fatalf("PendingResult: %+v %v", p, err)
	}
}

func TestPoolRecordedWithTheStep(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	if err := db.PoolAddOwned(ctx, u.ID, []PoolEntry{{md5n(1), 10}, {md5n(2), 20}}); err != nil {
		t.Fatal(err)
	}
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "c", md5n(1))})
	if err != nil {
		t.Fatal(err)
	}
	done, _, _, err := db.CompleteStepPooling(ctx, cs[0], 0, nil, []PoolEntry{{md5n(3), 30}}, nil)
	if err != nil || !done {
		t.Fatalf("done %v, %v", done, err)
	}
	// Called again (the hook may be): the step is left alone, the pool
	// entry is still recorded.
	done, _, _, err = db.CompleteStepPooling(ctx, cs[0], 0, nil, []PoolEntry{{md5n(4), 40}}, nil)
	if err != nil || done {
		t.Fatalf("second call: done %v, %v", done, err)
	}
	missing, err := db.PoolMissing(ctx, u.ID, []string{md5n(1), md5n(2), md5n(3), md5n(4), md5n(5)})
	if err != nil || !slices.Equal(missing, []string{md5n(5)}) {
		t.Fatalf("missing %v, %v", missing, err)
	}
}

// Queueing many steps at once: each step still creating or pending is
// queued with one step-created event, in the order named (a step named
// twice gets one), and a step that moved on is left as it is.
func TestSetStepStateQueuesManyInOrder(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	var ncs []NewChain
	for i := range stepStateChunk + 300 {
		ncs = append(ncs, batchChain("g", fmt.Sprint("c", i), md5n(i)))
	}
	created, err := db.CreateChains(ctx, u, ncs)
	if err != nil {
		t.Fatal(err)
	}
	done := created[7].WU(0)
	if err := db.SetStepState(ctx, []string{done}, "done"); err != nil {
		t.Fatal(err)
	}
	last, err := db.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var wus []string
	for i := len(created) - 1; i >= 0; i-- { // not the order they were made
		wus = append(wus, created[i].WU(0))
	}
	wus = append(wus, created[3].WU(0)) // twice
	if err := db.SetStepState(ctx, wus, StateQueued); err != nil {
		t.Fatal(err)
	}
	evs, err := db.Events(ctx, u.ID, last, 10*len(wus))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if ev.Type == EvStepCreated {
			got = append(got, ev.Name)
		}
	}
	var want []string
	for i := len(created) - 1; i >= 0; i-- {
		if i != 7 {
			want = append(want, created[i].Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%d step-created events (first %v), want %d (first %v)", len(got), got[:min(3, len(got))], len(want), want[:3])
	}
	for i, c := range created {
		s, err := db.StepOf(ctx, c, 0)
		wantState := StateQueued
		if i == 7 {
			wantState = "done"
		}
		if err != nil || s.State != wantState {
			t.Fatalf("chain %s: state %q (%v), want %s", c.Name, s.State, err, wantState)
		}
	}
}
