package store

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"testing"
)

// TestClaimsOfAGoneNotifierTakenAgain: a delivery claimed by a notifier
// that was killed mid-call (a process of this host that no longer runs,
// or another host's whose lease ran out, or whose lease is gone) is due
// again at once, not when its claim ends; the claims of a live notifier,
// here or on another host, and this process's own, are left alone.
func TestClaimsOfAGoneNotifierTakenAgain(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	claimers := []string{"localdead", "otherdead", "nolease", "otherlive", "mine"}
	for _, c := range claimers {
		if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/" + c, Events: []string{"all"}}); err != nil {
			t.Fatal(err)
		}
	}
	addTestEvent(t, db, uid, "c1")
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true") // a process that ran here and exited
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	here := thisProcess()
	run := func(q string, args ...any) {
		t.Helper()
		if _, err := db.sql.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// This process's lease exists once it claims; "mine" stands for it.
	if _, err := db.ClaimDeliveries(ctx, Claim{At: now() - 1000, Lease: 1, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	run(`INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() + 60)`, "localdead", here.host, gone.Process.Pid, 1)
	run(`INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() - 1)`, "otherdead", "another-host", 1, 1)
	run(`INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() + 60)`, "otherlive", "another-host", 1, 1)
	if here.host == "" { // no /proc: the lease says alone
		run(`UPDATE process_leases SET expires = 0 WHERE id = 'localdead'`)
	}
	// Each target's one delivery is claimed, for 90 s from now, by the
	// process its address names.
	for _, c := range claimers {
		by := c
		if c == "mine" {
			by = db.leaseID()
		}
		run(`UPDATE notify_outbox SET next_try = ?, claimed_by = ? WHERE target_id = (SELECT id FROM notify_targets WHERE address = ?)`,
			now()+90, by, "https://h.example.org/"+c)
	}
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Target.Address[len("https://h.example.org/"):])
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[localdead nolease otherdead]" {
		t.Fatalf("claimed again %v, want the deliveries of the notifiers gone: [localdead nolease otherdead]", got)
	}
	// They are this process's claims now: not taken a second time.
	if ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10}); err != nil || len(ds) != 0 {
		t.Fatalf("a second claim took %d deliveries (%v), want none", len(ds), err)
	}
	// A failed attempt is no claim: due when its retry says, whoever failed it.
	if err := db.DeliveryFailed(ctx, ds0(t, db, "localdead"), now()+3600, "refused"); err != nil {
		t.Fatal(err)
	}
	var by string
	db.sql.QueryRow(`SELECT claimed_by FROM notify_outbox WHERE id = ?`, ds0(t, db, "localdead")).Scan(&by)
	if by != "" {
		t.Errorf("a failed delivery still names its claimer %q", by)
	}
}

// ds0 is the outbox id of the delivery to the target named c.
func ds0(t *testing.T, db *DB, c string) int64 {
	t.Helper()
	var id int64
	if err := db.sql.QueryRow(`SELECT o.id FROM notify_outbox o JOIN notify_targets t ON t.id = o.target_id WHERE t.address = ?`, "https://h.example.org/"+c).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLostClaimTakenAgain: a claim this process committed but never heard
// of (the database killed while answering) is taken again by its next
// claim, which says what it has in flight; what it has in flight is not.
func TestLostClaimTakenAgain(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"lost", "flying"} {
		if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/" + c, Events: []string{"all"}}); err != nil {
			t.Fatal(err)
		}
	}
	addTestEvent(t, db, uid, "c1")
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{}})
	if err != nil || len(ds) != 2 {
		t.Fatalf("first claim: %d deliveries (%v), want 2", len(ds), err)
	}
	// The answer of the first claim was lost for "lost": only "flying" is
	// in flight here.
	flying := ds0(t, db, "flying")
	ds, err = db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Flying: map[int64]bool{flying: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != ds0(t, db, "lost") {
		t.Fatalf("claimed again %+v, want the lost claim alone", ds)
	}
}

// TestBatchOfAGoneNotifierTakenAgain: a claim takes a target's next
// deliveries in event order with its first; a batch claimed by a notifier
// that was killed mid-batch is taken again whole, at once, in order; and a
// batch ends before a delivery that is not due (another live notifier's),
// never skipping it.
func TestBatchOfAGoneNotifierTakenAgain(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/all", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		addTestEvent(t, db, uid, fmt.Sprint("c", i))
	}
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	events := func(ds []Delivery) []int64 {
		var out []int64
		for _, d := range ds {
			out = append(out, d.EventID)
		}
		return out
	}
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(events(ds)); got != "[1 2 3 4]" {
		t.Fatalf("a claim of 4 took events %s, want [1 2 3 4]", got)
	}
	// Its notifier is killed mid-batch: a process of this host that ended.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	here := thisProcess()
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() + ?)`,
		"localdead", here.host, gone.Process.Pid, 1, map[bool]int{true: 0, false: 60}[here.host == ""]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE notify_outbox SET claimed_by = 'localdead' WHERE claimed_by != ''`); err != nil {
		t.Fatal(err)
	}
	// Event 6 is another live notifier's (a claim that cannot be: the
	// batch must stop before it anyway).
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO process_leases(id, host, pid, started, expires) VALUES ('otherlive', 'another-host', 1, 1, unixepoch() + 60)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE notify_outbox SET claimed_by = 'otherlive', next_try = ? WHERE event_id = 6`, now()+90); err != nil {
		t.Fatal(err)
	}
	ds, err = db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(events(ds)); got != "[1 2 3 4 5]" {
		t.Fatalf("the next claim took events %s, want the gone notifier's batch and the one after it: [1 2 3 4 5]", got)
	}
	// Sent up to 2, failed at 3: 4 and 5 go back, due at once, unclaimed.
	if _, err := db.RecordOutcome(ctx, Outcome{Done: []int64{ds[0].ID, ds[1].ID}, Failed: ds[2].ID, NextTry: now() + 3600, Reason: "503",
		Rest: []int64{ds[3].ID, ds[4].ID}}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT event_id, attempts, claimed_by, next_try <= ? FROM notify_outbox ORDER BY event_id`, now())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var ev, attempts int64
		var by string
		var due bool
		rows.Scan(&ev, &attempts, &by, &due)
		got = append(got, fmt.Sprintf("%d:%d:%s:%v", ev, attempts, by, due))
	}
	rows.Close()
	if s := fmt.Sprint(got); s != "[3:1::false 4:0::true 5:0::true 6:0:otherlive:false]" {
		t.Fatalf("outbox after the outcome %s, want [3:1::false 4:0::true 5:0::true 6:0:otherlive:false]", s)
	}
	// 3 waits for its retry: nothing of the target is due before it.
	if ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 10, Batch: 16}); err != nil || len(ds) != 0 {
		t.Fatalf("a claim took %v (%v) while the target's first waits for its retry, want nothing", events(ds), err)
	}
}

// TestStillClaimed: a claimed delivery is this process's until another
// notifier takes it or its target is removed (which deletes it); a batch
// makes no further call then.
func TestStillClaimed(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: uid, Kind: NotifyWebhook, Address: "https://h.example.org/x", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	addTestEvent(t, db, uid, "c1")
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 1})
	if err != nil || len(ds) != 1 {
		t.Fatalf("claimed %d: %v", len(ds), err)
	}
	id := ds[0].ID
	still := func(want bool, when string) {
		t.Helper()
		if ok, err := db.StillClaimed(ctx, id); err != nil || ok != want {
			t.Fatalf("%s: StillClaimed %v, %v; want %v", when, ok, err, want)
		}
	}
	still(true, "just claimed")
	db.sql.ExecContext(ctx, `UPDATE notify_outbox SET claimed_by = 'another' WHERE id = ?`, id)
	still(false, "taken by another notifier")
	db.sql.ExecContext(ctx, `UPDATE notify_outbox SET claimed_by = ? WHERE id = ?`, db.leaseID(), id)
	still(true, "this process's again")
	if ok, err := db.RemoveNotifyTargets(ctx, uid, NotifyWebhook, "https://h.example.org/x"); err != nil || !ok {
		t.Fatalf("removing the target: %v, %v", ok, err)
	}
	still(false, "its target removed")
}
