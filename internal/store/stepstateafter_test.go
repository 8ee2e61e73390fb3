package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestSetStepStateAfter: the steps are marked in a transaction that
// commits only once after returns nil: while after runs nobody else sees
// them queued, an error from after leaves them creating with no event, and
// nil commits them queued with their events.
func TestSetStepStateAfter(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	var ncs []NewChain
	for i := range 3 {
		ncs = append(ncs, batchChain("g", fmt.Sprint("c", i), md5n(i)))
	}
	created, err := db.CreateChains(ctx, u, ncs)
	if err != nil {
		t.Fatal(err)
	}
	wus := []string{created[0].WU(0), created[1].WU(0), created[2].WU(0)}
	events := func() int {
		var n int
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM events WHERE type = ?`, EvStepCreated).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	states := func() []string {
		var out []string
		for _, c := range created {
			s, err := db.StepOf(ctx, c, 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s.State)
		}
		return out
	}
	refused := errors.New("BOINC's commit failed")
	calls := 0
	err = db.SetStepStateAfter(ctx, wus, StateQueued, func() error {
		calls++
		return refused
	})
	if !errors.Is(err, refused) || calls != 1 {
		t.Fatalf("after's error: got %v after %d calls", err, calls)
	}
	if got := states(); got[0] != "creating" || got[2] != "creating" || events() != 0 {
		t.Fatalf("after a refused after: states %v, %d step_created events", got, events())
	}
	var seen []string
	err = db.SetStepStateAfter(ctx, wus, StateQueued, func() error {
		seen = states()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen[0] != "creating" {
		t.Errorf("while after ran, the steps were seen %v (committed before it)", seen)
	}
	if got := states(); got[0] != StateQueued || got[1] != StateQueued || got[2] != StateQueued || events() != 3 {
		t.Errorf("after: states %v, %d step_created events", got, events())
	}
}
