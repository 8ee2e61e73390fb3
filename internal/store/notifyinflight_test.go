package store

import (
	"context"
	"testing"
)

// inflightSetup is one user with one webhook and one delivery waiting.
func inflightSetup(t *testing.T) (*DB, int64) {
	t.Helper()
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
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	return db, uid
}

// TestOwnDeliveryInFlightNotTakenAgain: a delivery whose claim ran out
// while this process still has it in flight (a slow call, a recording
// that waits for the database) is not claimed again by this process: it
// would be sent a second time by the notifier sending it.
func TestOwnDeliveryInFlightNotTakenAgain(t *testing.T) {
	ctx := context.Background()
	db, _ := inflightSetup(t)
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{}})
	if err != nil || len(ds) != 1 {
		t.Fatalf("first claim: %d deliveries (%v), want 1", len(ds), err)
	}
	id := ds[0].ID
	// Its claim has run out, its call still in flight.
	ds, err = db.ClaimDeliveries(ctx, Claim{At: now() + 91, Lease: 90, Limit: 10, Flying: map[int64]bool{id: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 0 {
		t.Fatalf("the delivery in flight was claimed again by its own notifier: %+v", ds)
	}
}

// TestClaimLeaseCountsFromItsCommit: a claim that waited for the write
// lock (its At long past) still holds its delivery for its whole lease
// from when it is taken, not from when it was asked for.
func TestClaimLeaseCountsFromItsCommit(t *testing.T) {
	ctx := context.Background()
	db, _ := inflightSetup(t)
	// Due since long ago; the claim was asked for 60 s ago.
	if _, err := db.sql.Exec(`UPDATE notify_outbox SET next_try = 0`); err != nil {
		t.Fatal(err)
	}
	before := now()
	ds, err := db.ClaimDeliveries(ctx, Claim{At: before - 60, Lease: 90, Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("claim: %d deliveries (%v), want 1", len(ds), err)
	}
	var next int64
	if err := db.sql.QueryRow(`SELECT next_try FROM notify_outbox WHERE id = ?`, ds[0].ID).Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next < before+90 {
		t.Fatalf("the claim holds its delivery until %d, %d s from its taking; want the whole lease, 90 s", next, next-before)
	}
}

// TestClaimRenewedAndFailureOfALostClaim: a claim renewed while in flight
// is not taken by another notifier when its first lease ends; a claim
// that ran out and was taken by another is not renewed, and its first
// claimer's failure leaves the other's claim alone.
func TestClaimRenewedAndFailureOfALostClaim(t *testing.T) {
	ctx := context.Background()
	db, _ := inflightSetup(t)
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 2, Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("claim: %d deliveries (%v), want 1", len(ds), err)
	}
	id := ds[0].ID
	held, err := db.RenewClaims(ctx, []int64{id}, 90)
	if err != nil || !held[id] {
		t.Fatalf("renewal: held %v (%v), want the delivery", held, err)
	}
	var next int64
	var by string
	look := func() {
		t.Helper()
		if err := db.sql.QueryRow(`SELECT next_try, claimed_by FROM notify_outbox WHERE id = ?`, id).Scan(&next, &by); err != nil {
			t.Fatal(err)
		}
	}
	look()
	if next < now()+89 || by != db.leaseID() {
		t.Fatalf("renewed claim: until %d (now %d), by %q; want 90 s more, by this process", next, now(), by)
	}
	// Another notifier (another host) took it once the claim ran out.
	if _, err := db.sql.Exec(`INSERT INTO process_leases(id, host, pid, started, expires) VALUES ('other', 'another-host', 1, 1, unixepoch() + 60)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`UPDATE notify_outbox SET claimed_by = 'other', next_try = ? WHERE id = ?`, now()+90, id); err != nil {
		t.Fatal(err)
	}
	held, err = db.RenewClaims(ctx, []int64{id}, 90)
	if err != nil || held[id] {
		t.Fatalf("renewal of a claim another took: held %v (%v), want none", held, err)
	}
	want := now() + 90
	if err := db.DeliveryFailed(ctx, id, now()+5, "timeout"); err != nil {
		t.Fatal(err)
	}
	look()
	if by != "other" || next < want-1 {
		t.Fatalf("a failure of the claim's first holder ended the other's claim: claimed by %q until %d (want 'other' until %d)", by, next, want)
	}
}
