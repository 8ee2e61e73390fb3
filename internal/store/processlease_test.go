package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestReviveCreatingLeases: a creating step is handed to the creator when
// its owner is gone (its lease ran out by the database's clock, its lease
// is missing, or it is a dead process of this host, or its pid now names
// another process), and never while its owner lives, however old the
// step; a step of an earlier version (no owner) after the legacy hour.
// DeleteChains (a failed submission cleaning up) keeps a chain the creator
// took over.
func TestReviveCreatingLeases(t *testing.T) {
	ctx := context.Background()
	loc := testLocation(t)
	db, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"mine", "otherlive", "otherdead", "nolease", "legacyold", "legacynew", "localdead", "pidreused"}
	var ncs []NewChain
	for _, n := range names {
		ncs = append(ncs, NewChain{Chain: Chain{Group: "g", Name: n, Queue: "q", App: "a", NSteps: 2, Params: "{}", Layout: "{}"}})
	}
	cs, err := db.CreateChains(ctx, User{ID: uid, Name: "alice"}, ncs)
	if err != nil {
		t.Fatal(err)
	}
	id := map[string]int64{}
	for _, c := range cs {
		id[c.Name] = c.ID
	}
	// A process that ran here and exited.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	here := thisProcess()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.sql.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lease := func(lid, host string, pid int, started, ttl int64) {
		exec(`INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() + ?)`, lid, host, pid, started, ttl)
	}
	lease("otherlive", "another-host", 1, 1, 60)
	lease("otherdead", "another-host", 1, 1, -1)
	lease("localdead", here.host, gone.Process.Pid, 1, 60)
	lease("pidreused", here.host, os.Getpid(), here.started+1, 60)
	for _, n := range []string{"otherlive", "otherdead", "nolease", "localdead", "pidreused"} {
		exec(`UPDATE steps SET owner = ? WHERE chain_id = ?`, n, id[n])
	}
	old := time.Now().Add(-2 * time.Hour).Unix()
	exec(`UPDATE steps SET owner = '', created = ? WHERE chain_id = ?`, old, id["legacyold"])
	exec(`UPDATE steps SET owner = '' WHERE chain_id = ?`, id["legacynew"])
	// The local and pid checks need /proc; elsewhere a lease says alone.
	if here.host == "" {
		exec(`UPDATE process_leases SET expires = 0 WHERE id IN ('localdead', 'pidreused')`)
	}

	n, err := db.ReviveCreating(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mine": "creating", "otherlive": "creating", "legacynew": "creating",
		"otherdead": StatePending, "nolease": StatePending, "legacyold": StatePending, "localdead": StatePending, "pidreused": StatePending}
	for name, st := range want {
		s, err := db.StepOf(ctx, Chain{ID: id[name], Name: name}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.State != st {
			t.Errorf("step 0 of %s (owner gone: %v) is %s, want %s", name, st == StatePending, s.State, st)
		}
	}
	if n != 5 {
		t.Errorf("ReviveCreating revived %d steps, want 5", n)
	}
	// The leases of the processes gone are collected; the live ones stay.
	var leases []string
	rows, err := db.sql.QueryContext(ctx, `SELECT id FROM process_leases ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		leases = append(leases, s)
	}
	rows.Close()
	if fmt.Sprint(leases) != fmt.Sprint(sortedStrings(db.leaseID(), "otherlive")) {
		t.Errorf("leases left %v, want this process's and otherlive", leases)
	}
	// A live owner keeps its steps at the next look too.
	if n, err := db.ReviveCreating(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("second look revived %d (%v), want 0", n, err)
	}

	// A failed submission removes its own chains, not one the creator
	// took over (its work unit may exist now).
	exec(`UPDATE steps SET owner = ? WHERE chain_id = ?`, db.leaseID(), id["otherdead"]) // as if this process had recorded it
	if err := db.DeleteChains(ctx, []int64{id["mine"], id["otherdead"]}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StepOf(ctx, Chain{ID: id["mine"], Name: "mine"}, 0); err == nil {
		t.Error("DeleteChains left the chain this process owned")
	}
	if s, err := db.StepOf(ctx, Chain{ID: id["otherdead"], Name: "otherdead"}, 0); err != nil || s.State != StatePending {
		t.Errorf("DeleteChains removed a chain the creator took over: %+v %v", s, err)
	}

	// Closing removes this process's lease: what it still owned is
	// anybody's at once.
	db.Close()
	db2, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if n, err := db2.Leases(ctx); err != nil || n != 1 {
		t.Errorf("%d leases after close (%v), want 1 (otherlive)", n, err)
	}
}

// TestLeaseRenewed: a lease outlives its TTL while its process lives (it is
// renewed), so a slow submission keeps its steps.
func TestLeaseRenewed(t *testing.T) {
	restoreLeaseTTL(t)
	LeaseTTL = 2 * time.Second
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := db.CreateChains(ctx, User{ID: uid, Name: "alice"}, []NewChain{{Chain: Chain{Group: "g", Name: "c", Queue: "q", App: "a", NSteps: 1, Params: "{}", Layout: "{}"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Another host's creator would judge by the lease alone.
	db.sql.ExecContext(ctx, `UPDATE process_leases SET host = 'another-host'`)
	time.Sleep(3*LeaseTTL + time.Second)
	if n, err := db.ReviveCreating(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("a live process's step was revived after %v (%d, %v): its lease was not renewed", 3*LeaseTTL, n, err)
	}
	if s, err := db.StepOf(ctx, cs[0], 0); err != nil || s.State != "creating" {
		t.Fatalf("step 0 is %+v (%v), want creating", s, err)
	}
}

func sortedStrings(a, b string) []string {
	if a > b {
		a, b = b, a
	}
	return []string{a, b}
}

// TestAbandonedStepsReleased: a submission whose process lives on but could
// not record its steps queued (the database away: here a cancelled
// context), nor remove its chains after a failed create_work, nor mark
// them failed when BOINC could not say which work units it made, hands them
// to the creator at its lease's next renewal; it would hold them for good
// otherwise.
func TestAbandonedStepsReleased(t *testing.T) {
	restoreLeaseTTL(t)
	LeaseTTL = 600 * time.Millisecond
	ctx := context.Background()
	db := openTest(t)
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := db.CreateChains(ctx, User{ID: uid, Name: "alice"}, []NewChain{
		{Chain: Chain{Group: "g", Name: "queued", Queue: "q", App: "a", NSteps: 1, Params: "{}", Layout: "{}"}},
		{Chain: Chain{Group: "g", Name: "deleted", Queue: "q", App: "a", NSteps: 1, Params: "{}", Layout: "{}"}},
		{Chain: Chain{Group: "g", Name: "handed", Queue: "q", App: "a", NSteps: 1, Params: "{}", Layout: "{}"}}})
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.SetStepState(gone, []string{cs[0].WU(0)}, StateQueued); err == nil {
		t.Fatal("SetStepState with a cancelled context succeeded")
	}
	if err := db.DeleteChains(gone, []int64{cs[1].ID}); err == nil {
		t.Fatal("DeleteChains with a cancelled context succeeded")
	}
	// A submission that could neither cancel its work units nor mark its
	// chains failed (both databases away) hands them over.
	db.HandToCreator([]string{cs[2].WU(0)})
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range cs {
		for {
			s, err := db.StepOf(ctx, c, 0)
			if err != nil {
				t.Fatal(err)
			}
			if s.State == StatePending {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("step 0 of %s is still %s: this live process holds it for good", c.Name, s.State)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// restoreLeaseTTL puts LeaseTTL back when the test ends, after the
// databases it opens later are closed (cleanups run last first): their
// lease renewals read it until then.
func restoreLeaseTTL(t *testing.T) {
	d := LeaseTTL
	t.Cleanup(func() { LeaseTTL = d })
}
