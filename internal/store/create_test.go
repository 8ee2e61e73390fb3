package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCreateChainsEachAcrossBatches(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	n := 2*createBatch + 7
	var ncs []NewChain
	for i := range n {
		ncs = append(ncs, batchChain("g", fmt.Sprint("c", i), md5n(i), md5n(1)))
	}
	var seen []int
	created, err := db.CreateChainsEach(ctx, u, ncs, 0, func(i int, c Chain) error {
		if c.Name != ncs[i].Name || c.ID == 0 || c.Tag == "" || c.User != strings.ToUpper(u.Name) {
			t.Errorf("callback %d: %+v", i, c)
		}
		seen = append(seen, i)
		return nil
	})
	if err != nil || len(created) != n || len(seen) != n {
		t.Fatalf("created %d, %d callbacks: %v", len(created), len(seen), err)
	}
	for i, c := range created {
		if seen[i] != i || c.Name != ncs[i].Name {
			t.Fatalf("chain %d out of order: %s after callback %d", i, c.Name, seen[i])
		}
		got, s, err := db.StepByWU(ctx, c.WU(0))
		if err != nil || got.ID != c.ID || s.State != "creating" || len(s.Inputs) != 2 || s.Inputs[0] != md5n(i) {
			t.Fatalf("chain %s: %+v %+v %v", c.Name, got, s, err)
		}
	}

	// A name taken in a later batch is named, and nothing of the request stays.
	var again []NewChain
	for i := range createBatch + 5 {
		again = append(again, batchChain("h", fmt.Sprint("c", i), md5n(i)))
	}
	again = append(again, batchChain("g", "c3", md5n(3)))
	_, err = db.CreateChainsEach(ctx, u, again, 0, nil)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "chain c3 in group g") {
		t.Fatalf("taken name: %v", err)
	}
	if cs, _ := db.Chains(ctx, u.ID, "h", ""); len(cs) != 0 {
		t.Fatalf("a failed request left %d chains", len(cs))
	}
	// So does a failing callback, and a name given twice.
	boom := errors.New("boom")
	_, err = db.CreateChainsEach(ctx, u, again[:createBatch+5], 0, func(i int, c Chain) error {
		if i == createBatch+1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("callback failure: %v", err)
	}
	_, err = db.CreateChainsEach(ctx, u, []NewChain{batchChain("h", "x"), batchChain("h", "y"), batchChain("h", "x")}, 0, nil)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "x in group h appears twice") {
		t.Fatalf("twice: %v", err)
	}
	if cs, _ := db.Chains(ctx, u.ID, "h", ""); len(cs) != 0 {
		t.Fatalf("failed requests left %d chains", len(cs))
	}
}

func TestBoundsAndReferenced(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	other, _ := db.AddUser(ctx, "dave", "hash-dave")
	for i := range 5 {
		db.PoolAdd(ctx, md5n(i), int64(10*(i+1)))
	}
	// md5n(0) is shared by many chains; md5n(3) only by dave's; md5n(4)
	// only by a purged chain.
	var ncs []NewChain
	for i := range 3 * createBatch {
		ncs = append(ncs, batchChain("g", fmt.Sprint("c", i), md5n(0), md5n(1+i%2)))
	}
	if _, err := db.CreateChains(ctx, u, append(ncs, batchChain("g", "gone", md5n(4)))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Purge(ctx, u.ID, "g", "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateChains(ctx, User{ID: other, Name: "dave"}, []NewChain{batchChain("g", "c", md5n(3))}); err != nil {
		t.Fatal(err)
	}
	ref, err := db.Referenced(ctx, u.ID, []string{md5n(0), md5n(1), md5n(2), md5n(3), md5n(4), md5n(99)})
	if err != nil || len(ref) != 3 || !ref[md5n(0)] || !ref[md5n(1)] || !ref[md5n(2)] {
		t.Fatalf("referenced %v, %v", ref, err)
	}
	use, err := db.UsageOf(ctx, u.ID)
	if err != nil || use.PoolBytes != 10+20+30 {
		t.Fatalf("usage %+v %v", use, err)
	}
	b, err := db.BoundsOf(ctx, u.ID)
	if err != nil || b.PoolBytes != 10+20+30+40+50 || b.Chains != 3*createBatch+1 || b.Chains < use.RunningChains {
		t.Fatalf("bounds %+v (usage %+v) %v", b, use, err)
	}
}
