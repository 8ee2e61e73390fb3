package engine_test

import (
	"context"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A batch submission sent again while the first try still runs (its
// client gone: HTCondor's GAHP sends BOINC_SUBMIT again) takes the batch
// up; the first try, failing before its chains were recorded, drops the
// batch, finding no chain in its group. The second's chains, recorded
// after, keep the batch: recorded again with its jobs. Before, they were
// in no batch, the GAHP's queries found none, and the submission sent
// once more was refused (the group holds chains).
func TestBatchDroppedByFailedDuplicateKept(t *testing.T) {
	f := newFixture(t)
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	files := map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}
	req := wire.SubmitRequest{Queue: "langevin", Group: "gdup", Upload: up, Options: wire.Options{NumSteps: 2},
		Batch:  &wire.BatchSpec{Name: "dup"},
		Chains: []wire.ChainSpec{{Name: "c1", Job: "dup#1.0", Files: files}, {Name: "c2", Job: "dup#1.1", Files: files}}}
	// The first try's record of the batch, then its failure's drop, both
	// after the second try found the batch.
	if _, err := f.e.State().CreateBatch(f.ctx, store.Batch{UserID: f.u.ID, Name: "dup", Group: "gdup", Queue: "langevin"},
		[]store.BatchJob{{Name: "dup#1.0", Chain: "c1"}, {Name: "dup#1.1", Chain: "c2"}}); err != nil {
		t.Fatal(err)
	}
	f.e.SetAfterBeginBatch(func(b store.Batch) {
		if dropped, err := f.e.State().DropUnusedBatch(context.WithoutCancel(f.ctx), b); err != nil || !dropped {
			t.Errorf("the first try's drop: %v, %v", dropped, err)
		}
	})
	resp, err := f.e.Submit(f.ctx, f.u, req)
	if err != nil || len(resp.Chains) != 2 {
		t.Fatalf("the batch sent again: %v, %v", resp, err)
	}
	b, err := f.e.State().BatchByName(f.ctx, f.u.ID, "dup")
	if err != nil {
		t.Fatalf("the batch after its chains were recorded: %v", err)
	}
	jobs, err := f.e.State().BatchJobs(f.ctx, b, 0)
	if err != nil || len(jobs) != 2 || b.Group != "gdup" {
		t.Fatalf("batch %+v, jobs %v, %v: want group gdup, 2 jobs", b, jobs, err)
	}
	// Sent once more (its inputs uploaded again), it is answered as
	// submitted.
	req.Upload, refs = f.upload("1 2 3\n", "0 0 0\n")
	for i := range req.Chains {
		req.Chains[i].Files = map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}
	}
	if resp, err := f.e.Submit(f.ctx, f.u, req); err != nil || !resp.AlreadySubmitted {
		t.Fatalf("the batch sent once more: %+v, %v", resp, err)
	}
}
