package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// TestLeaseRenewedWhileAWriterHoldsTheLock: on MariaDB (the state two hosts
// share) a writer holding the write lock for longer than LeaseTTL (a purge
// held it 35 s to 3 min in the 1,000,000-work-unit run) does not let a
// live notifier's lease run out, so the next claim leaves the deliveries
// it has in flight alone. Before, the renewals waited behind that writer,
// every lease ran out by the database's clock, and the first claim after
// it took the live notifier's deliveries (sent, their outcome waiting for
// the same lock) and sent them again.
func TestLeaseRenewedWhileAWriterHoldsTheLock(t *testing.T) {
	mariadbtest.Shared(t)
	loc := "mysql://" + mariadbtest.NewDB(t)
	// Restored after the databases' close (cleanups run last first),
	// which stops the renewals that read it.
	ttl := LeaseTTL
	t.Cleanup(func() { LeaseTTL = ttl })
	LeaseTTL = 3 * time.Second // renewed every second
	ctx := context.Background()
	open := func() *DB {
		db, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	// Two notifiers (two hosts' processes: one process here, two state
	// handles with a lease each) and the long writer.
	a, b, writer := open(), open(), open()
	uid, err := a.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/hook", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	addTestEvent(t, a, uid, "c1")
	if _, err := a.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	// b's lease exists (its claim takes it) and is renewed from now on.
	if ds, err := b.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{}}); err != nil || len(ds) != 1 {
		t.Fatalf("b's claim: %d deliveries, %v; want its one", len(ds), err)
	}
	// b's claim is in flight (its call made, its outcome not yet
	// recorded) while the writer holds the lock for 2.5 leases; a's next
	// claim (the other host's notifier) waits behind the writer, before
	// b's last renewals.
	hold := LeaseTTL * 5 / 2
	type claimed struct {
		ds  []Delivery
		err error
	}
	next := make(chan claimed, 1)
	go func() {
		time.Sleep(hold - 2*time.Second)
		ds, err := a.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{}})
		next <- claimed{ds, err}
	}()
	if err := writer.Tx(ctx, func(tx *sql.Tx) error {
		time.Sleep(hold)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c := <-next
	ds, err := c.ds, c.err
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 0 {
		var left int64
		b.sql.QueryRowContext(ctx, `SELECT expires - unixepoch() FROM process_leases WHERE id = ?`, b.leaseID()).Scan(&left)
		t.Fatalf("after a writer held the write lock %v (LeaseTTL %v), another notifier took %d deliveries of a live one "+
			"(its lease has %d s left): they would be sent twice", hold, LeaseTTL, len(ds), left)
	}
}
