package store

import (
	"context"
	"testing"
)

// TestNotifyRound: one transaction records the deliveries sent, fans out
// the events that came and claims what is due; a delivery sent is removed
// before the claim, so that the claim (which takes again this process's
// claims it has not in flight) does not send it a second time, and the
// target's next event is due in the same round.
func TestNotifyRound(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/a", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	addTestEvent(t, db, uid, "c1")
	n, ds, err := db.NotifyRound(ctx, nil, 100, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{}})
	if err != nil || n != 1 || len(ds) != 1 {
		t.Fatalf("first round: %d fanned out, %d claimed (%v), want 1 and 1", n, len(ds), err)
	}
	first := ds[0]
	addTestEvent(t, db, uid, "c2")
	// The first delivery was made (so not in flight any more).
	n, ds, err = db.NotifyRound(ctx, []int64{first.ID}, 100, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || len(ds) != 1 || ds[0].ID == first.ID || ds[0].EventID == first.EventID {
		t.Fatalf("second round: %d fanned out, claimed %+v; want the second event's delivery only", n, ds)
	}
	var left int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM notify_outbox WHERE id = ?`, first.ID).Scan(&left); err != nil || left != 0 {
		t.Fatalf("the delivery sent is still in the outbox (%d, %v)", left, err)
	}
	// Neither fan-out nor claim: only the record.
	n, ds, err = db.NotifyRound(ctx, []int64{ds[0].ID}, 0, Claim{})
	if err != nil || n != 0 || len(ds) != 0 {
		t.Fatalf("a round recording only: %d, %d, %v", n, len(ds), err)
	}
	if w, _, err := db.OutboxWaiting(ctx); err != nil || w != 0 {
		t.Fatalf("%d deliveries wait (%v), want none", w, err)
	}
}
