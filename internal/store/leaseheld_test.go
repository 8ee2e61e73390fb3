package store

import (
	"context"
	"testing"
	"time"
)

// TestClaimLeavesFreshLeaseAlone: a notifier's claim writes this process's
// lease only when no renewal committed lately (the first claim, renewals
// failing, the lease removed as run out); after a renewal it leaves the
// row alone, a statement less in each claim.
func TestClaimLeavesFreshLeaseAlone(t *testing.T) {
	// Restored after the database's close (cleanups run last first),
	// which stops the renewals that read it.
	ttl := LeaseTTL
	t.Cleanup(func() { LeaseTTL = ttl })
	LeaseTTL = 6 * time.Second // renewed every 2 s, fresh for 2 s after
	ctx := context.Background()
	db := openTest(t)
	expires := func() (int64, bool) {
		t.Helper()
		var e int64
		n := 0
		rows, err := db.sql.QueryContext(ctx, `SELECT expires FROM process_leases`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&e); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n > 1 {
			t.Fatalf("%d leases, want this process's one", n)
		}
		return e, n == 1
	}
	claim := func() {
		t.Helper()
		if _, err := db.ClaimDeliveries(ctx, Claim{At: time.Now().Unix(), Lease: 90, Limit: 10}); err != nil {
			t.Fatal(err)
		}
	}
	claim()
	if _, ok := expires(); !ok {
		t.Fatal("the first claim recorded no lease")
	}
	// Just after a renewal, the lease is fresh: a claim leaves it alone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		db.lease.mu.Lock()
		renewed := db.lease.renewed
		db.lease.mu.Unlock()
		if !renewed.IsZero() && time.Since(renewed) < 500*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease was not renewed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	const marker = 4102444800 // 2100-01-01
	if _, err := db.sql.ExecContext(ctx, `UPDATE process_leases SET expires = ?`, marker); err != nil {
		t.Fatal(err)
	}
	claim()
	if e, _ := expires(); e != marker {
		t.Errorf("a claim just after a renewal wrote the lease again (expires %d)", e)
	}
	// A renewal long ago (they failed), the lease removed meanwhile as run
	// out: the claim records it again, or its claims would be taken as a
	// dead notifier's.
	db.leaseMu.Lock()
	stop, done := db.lease.stop, db.lease.done
	db.lease.stop = nil
	db.leaseMu.Unlock()
	close(stop)
	<-done
	db.lease.mu.Lock()
	db.lease.renewed = time.Now().Add(-LeaseTTL / 2)
	db.lease.mu.Unlock()
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM process_leases`); err != nil {
		t.Fatal(err)
	}
	claim()
	if _, ok := expires(); !ok {
		t.Fatal("a claim with the lease renewed long ago and since removed did not record it again")
	}
}
