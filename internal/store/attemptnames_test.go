package store

import (
	"context"
	"errors"
	"testing"
)

// TestStepNotRemadeUnderAnEarlierName: a step made again (a retry, a
// resume) never takes the name of one of its earlier attempts, whose work
// unit BOINC has (ended): made under it, the step waited for ever on that
// work unit ("exists in BOINC already; recorded as created"). Seen in
// e2e life under Apache, a resume's random tag that of attempt 2.
func TestStepNotRemadeUnderAnEarlierName(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "z", md5n(1))})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	first, second := c.WU(0), c.WU(0)+"x"
	if ok, err := db.RetryStep(ctx, c, 0, first, second, "failed", 0); err != nil || !ok {
		t.Fatalf("retry: %v %v", ok, err)
	}
	if ok, err := db.RetryStep(ctx, c, 0, second, first, "failed", 0); !errors.Is(err, ErrExists) || ok {
		t.Fatalf("a retry under the first attempt's name: %v %v, want ErrExists", ok, err)
	}
	wantToCreate(t, db, c, second, "after the refused retry")
	// Its work unit made and failed for good: the chain failed.
	if _, err := db.sql.ExecContext(ctx, `UPDATE steps SET state = 'failed' WHERE chain_id = ? AND step = 0`, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.FailChain(ctx, c.ID, 0, "failed for good"); err != nil {
		t.Fatal(err)
	}
	// The resume's namer draws the earlier names first, then a fresh one.
	draws := []string{first, second, c.WU(0) + "y"}
	done, refused, err := db.Resume(ctx, u.ID, "g", "z", func(Chain, int) string {
		n := draws[0]
		if len(draws) > 1 {
			draws = draws[1:]
		}
		return n
	}, nil)
	if err != nil || len(done) != 1 {
		t.Fatalf("resume: %v %v %v", done, refused, err)
	}
	wantToCreate(t, db, c, c.WU(0)+"y", "after the resume")
}
