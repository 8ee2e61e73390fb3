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

// TestRetiredJobNames: a dropped batch's job names are remembered as
// retired with their batch, for its user alone, until a batch of that
// name is made again or RetiredBatchDays pass; a job name taken by a live
// batch and retired again names its latest batch.
func TestRetiredJobNames(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	other, err := db.AddUser(ctx, "dave", "hash-dave")
	if err != nil {
		t.Fatal(err)
	}
	retired := func(user int64, job string) string {
		t.Helper()
		b, ok, err := db.JobRetired(ctx, user, job)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (b != "") {
			t.Fatalf("JobRetired(%s) = %q, %v", job, b, ok)
		}
		return b
	}
	mk := func(name string, jobs ...string) Batch {
		t.Helper()
		b := Batch{UserID: u.ID, Name: name, Group: "g_" + name, Queue: "q"}
		var bj []BatchJob
		for i, j := range jobs {
			bj = append(bj, BatchJob{Name: j, Chain: "c" + string(rune('0'+i))})
		}
		id, err := db.CreateBatch(ctx, b, bj)
		if err != nil {
			t.Fatal(err)
		}
		b.ID = id
		return b
	}
	drop := func(b Batch) {
		t.Helper()
		if err := db.DropBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	b := mk("b", "j1", "j2")
	if retired(u.ID, "j1") != "" {
		t.Fatal("a live batch's job counts as retired")
	}
	drop(b)
	if retired(u.ID, "j1") != "b" || retired(u.ID, "j2") != "b" || retired(other, "j1") != "" || retired(u.ID, "j3") != "" {
		t.Fatal("retired jobs: want j1 and j2 of b, of its user only")
	}
	// j2 in another batch, retired: it names that batch; j1 stays b's.
	drop(mk("c", "j2"))
	if retired(u.ID, "j2") != "c" || retired(u.ID, "j1") != "b" {
		t.Fatalf("after c: j1 %q, j2 %q; want b, c", retired(u.ID, "j1"), retired(u.ID, "j2"))
	}
	// b made again: its old jobs are no longer retired.
	b = mk("b", "j9")
	if retired(u.ID, "j1") != "" {
		t.Fatal("a job of a batch made again under its name counts as retired")
	}
	drop(b)
	// Old ones go with the next retirement.
	if _, err := db.sql.ExecContext(ctx, `UPDATE retired_jobs SET retired = retired - ?`, RetiredBatchDays*86400+1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE retired_batches SET retired = retired - ?`, RetiredBatchDays*86400+1); err != nil {
		t.Fatal(err)
	}
	drop(mk("d", "j4"))
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM retired_jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if retired(u.ID, "j9") != "" || retired(u.ID, "j4") != "d" || n != 1 {
		t.Fatalf("after the retention: %d rows, want only j4 of d", n)
	}
}
