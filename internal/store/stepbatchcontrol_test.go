package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBatchControlWaitsForReadAhead: a user's stop or abort that comes
// while a batch has read its steps ahead and not yet recorded them waits
// for the batch (it holds the write lock, on SQLite and on MariaDB, of
// every process and host), so the batch's gathered records never act on
// what was read before the control: the rows end as when the records came
// first and the controls after them.
func TestBatchControlWaitsForReadAhead(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	setup := func(group string) []string {
		last := batchChain(group, "last", md5n(1), md5n(2))
		last.NSteps = 1
		created, err := db.CreateChains(ctx, u, []NewChain{batchChain(group, "goon", md5n(1), md5n(2)), last,
			batchChain(group, "other", md5n(1), md5n(2))})
		if err != nil {
			t.Fatal(err)
		}
		var wus []string
		for _, c := range created {
			wus = append(wus, c.WU(0))
		}
		return wus
	}
	control := func(group string) error {
		if _, err := db.Stop(ctx, u.ID, group, "goon", "by its user"); err != nil {
			return err
		}
		_, _, err := db.Abort(ctx, u.ID, group, "last", "by its user")
		return err
	}
	single, batched := setup("single"), setup("batched")
	for _, wu := range single {
		finishStep(ctx, t, db, wu, true)
	}
	if err := control("single"); err != nil {
		t.Fatal(err)
	}
	controlled := make(chan error, 1)
	if err := db.Batch(ctx, func(ctx context.Context) error {
		if err := db.ReadAhead(ctx, batched); err != nil {
			return err
		}
		go func() { controlled <- control("batched") }()
		select {
		case err := <-controlled:
			t.Errorf("a control ran inside the batch's transaction (err %v)", err)
		case <-time.After(300 * time.Millisecond):
		}
		for _, wu := range batched {
			finishStep(ctx, t, db, wu, true)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-controlled; err != nil {
		t.Fatal(err)
	}
	want, got := groupRecords(t, db, "single"), groupRecords(t, db, "batched")
	if !slices.Equal(got, want) {
		t.Errorf("the batch with controls waiting recorded\n%s\none by one, controls after:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
