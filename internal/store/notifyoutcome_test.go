package store

import (
	"context"
	"fmt"
	"testing"
)

// TestOutcomeRecordedAfterTheClaimRanOut: a notifier records its batch's
// outcome after the claim ran out (the database away meanwhile). What it
// sent is removed, and those another notifier had taken are named (the
// receiver may get them again); a failure of one another notifier took
// leaves that one's claim alone; and while the batch is in flight here,
// this process takes none of it again, claim run out or not.
func TestOutcomeRecordedAfterTheClaimRanOut(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/x", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		addTestEvent(t, db, uid, fmt.Sprint("c", i))
	}
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Batch: 16})
	if err != nil || len(ds) != 4 {
		t.Fatalf("claimed %d: %v", len(ds), err)
	}
	run := func(q string, args ...any) {
		t.Helper()
		if _, err := db.sql.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The claim ran out.
	run(`UPDATE notify_outbox SET next_try = ?`, now()-1)
	flying := map[int64]bool{}
	for _, d := range ds {
		flying[d.ID] = true
	}
	if got, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Batch: 16, Flying: flying}); err != nil || len(got) != 0 {
		t.Fatalf("this process's claim took %d (%v) of its own batch in flight, want nothing", len(got), err)
	}
	// Another notifier took the second and the fourth.
	run(`UPDATE notify_outbox SET claimed_by = 'other', next_try = ? WHERE id IN (?, ?)`, now()+90, ds[1].ID, ds[3].ID)
	taken, err := db.RecordOutcome(ctx, Outcome{Done: []int64{ds[0].ID, ds[1].ID, ds[2].ID}, Failed: ds[3].ID, NextTry: now() + 3600, Reason: "503"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(taken) != fmt.Sprint([]int64{ds[1].ID}) {
		t.Errorf("taken %v, want the one sent that another notifier had taken: [%d]", taken, ds[1].ID)
	}
	var n, attempts int
	var by string
	db.sql.QueryRowContext(ctx, `SELECT count(*) FROM notify_outbox`).Scan(&n)
	db.sql.QueryRowContext(ctx, `SELECT attempts, claimed_by FROM notify_outbox WHERE id = ?`, ds[3].ID).Scan(&attempts, &by)
	if n != 1 || attempts != 0 || by != "other" {
		t.Errorf("after the outcome: %d in the outbox, the failed one's attempts %d, claimed by %q; want 1, 0, other", n, attempts, by)
	}
}
