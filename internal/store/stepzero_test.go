package store

import (
	"context"
	"slices"
	"testing"
)

// TestStepZeroReadsChainInputs: a chain's first step has its inputs only
// in chain_inputs. They are its inputs under a retry's new work-unit name
// and in the creator's list, they keep their download links while the step
// is unfinished, and they free them once it is done.
func TestStepZeroReadsChainInputs(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	in := []string{md5n(7), "", md5n(8)}
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "z", in...)})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	r, err := db.query(ctx, `SELECT wu_name FROM step_inputs`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Next() {
		t.Fatal("step_inputs holds rows for step 0; it reads chain_inputs")
	}
	r.Close()
	if err := db.PoolAddAll(ctx, []PoolEntry{{MD5: md5n(7), Size: 1}, {MD5: md5n(8), Size: 1}, {MD5: md5n(9), Size: 1}}); err != nil {
		t.Fatal(err)
	}
	links := func() []string {
		t.Helper()
		var got []string
		if err := db.Collect(ctx, 0, func(_, l []string) error { got = append(got, l...); return nil }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		return got
	}
	if got := links(); !slices.Equal(got, []string{md5n(9)}) {
		t.Fatalf("links free while step 0 is unfinished: %v, want only %s", got, md5n(9))
	}

	newWU := c.WU(0) + "x"
	if ok, err := db.RetryStep(ctx, c, 0, c.WU(0), newWU, "test", 0); err != nil || !ok {
		t.Fatalf("retry: %v %v", ok, err)
	}
	_, s, err := db.StepByWU(ctx, newWU)
	if err != nil || !slices.Equal(s.Inputs, in) {
		t.Fatalf("step 0 after a retry reads %v (%v), want %v", s.Inputs, err, in)
	}
	pending, err := db.PendingSteps(ctx, 10)
	if err != nil || len(pending) != 1 || !slices.Equal(pending[0].Step.Inputs, in) {
		t.Fatalf("the creator's list: %+v %v", pending, err)
	}
	if got := links(); !slices.Equal(got, []string{md5n(9)}) {
		t.Fatalf("links free while the retried step 0 waits: %v", got)
	}
	if unused := forgetUnused(t, db, md5n(7), md5n(9)); !slices.Equal(unused, []string{md5n(9)}) {
		t.Fatalf("a failed request would drop %v, want only %s", unused, md5n(9))
	}

	if err := db.SetStepState(ctx, []string{newWU}, "done"); err != nil {
		t.Fatal(err)
	}
	// (md5n(9) left the index with ForgetUnused.)
	if got := links(); !slices.Equal(got, []string{md5n(7), md5n(8)}) {
		t.Fatalf("links free once step 0 is done: %v", got)
	}
}

// forgetUnused runs ForgetUnused and returns what it found unused.
func forgetUnused(t *testing.T, db *DB, md5s ...string) []string {
	t.Helper()
	var unused []string
	if err := db.ForgetUnused(context.Background(), md5s, func(u []string) { unused = u }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(unused)
	return unused
}
