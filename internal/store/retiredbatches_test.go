package store

import (
	"context"
	"testing"
)

// TestRetiredBatchNames: a dropped batch's name is remembered as retired,
// for its user alone; making a batch of that name again forgets it; names
// retired longer than RetiredBatchDays ago go with the next retirement.
func TestRetiredBatchNames(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	other, err := db.AddUser(ctx, "dave", "hash-dave")
	if err != nil {
		t.Fatal(err)
	}
	retired := func(user int64, name string) bool {
		t.Helper()
		ok, err := db.BatchRetired(ctx, user, name)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	mk := func(name string) Batch {
		t.Helper()
		b := Batch{UserID: u.ID, Name: name, Group: "g_" + name, Queue: "q"}
		id, err := db.CreateBatch(ctx, b, []BatchJob{{Name: name + "#1", Chain: "c1"}})
		if err != nil {
			t.Fatal(err)
		}
		b.ID = id
		return b
	}
	b := mk("b")
	if retired(u.ID, "b") {
		t.Fatal("a live batch counts as retired")
	}
	if err := db.DropBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if !retired(u.ID, "b") || retired(other, "b") || retired(u.ID, "c") {
		t.Fatal("retired names: want b of its user only")
	}
	b = mk("b")
	if retired(u.ID, "b") {
		t.Fatal("a batch made again under a retired name counts as retired")
	}
	if err := db.DropBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	// An old name goes with the next retirement.
	if _, err := db.sql.ExecContext(ctx, `UPDATE retired_batches SET retired = retired - ?`, RetiredBatchDays*86400+1); err != nil {
		t.Fatal(err)
	}
	if err := db.DropBatch(ctx, mk("c")); err != nil {
		t.Fatal(err)
	}
	if retired(u.ID, "b") || !retired(u.ID, "c") {
		t.Fatal("after the retention: want c retired, b forgotten")
	}
}
