package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func addTestEvent(t *testing.T, db *DB, userID int64, name string) {
	t.Helper()
	if _, err := db.sql.Exec(`INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES (?,?,?,?,?,?,'')`,
		now(), userID, EvChainDone, "g", name, -1); err != nil {
		t.Fatal(err)
	}
}

// TestAddNotifyTargetsMakesSecretAndBounds: the first target brings the
// user's secret in its transaction; e-mail needs a confirmed address; the
// bound counts every target of the user and refuses all of a batch.
func TestAddNotifyTargetsMakesSecretAndBounds(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	id, _ := db.AddUser(ctx, "alice", "h")
	var secret string
	hook := func(i int) NotifyTarget {
		return NotifyTarget{UserID: id, Group: "g", Kind: NotifyWebhook, Address: fmt.Sprintf("https://h.example.org/%d", i), Events: []string{"all"}}
	}
	if err := db.AddNotifyTargets(ctx, []NotifyTarget{hook(0)}, 3); err != nil {
		t.Fatal(err)
	}
	db.sql.QueryRow(`SELECT notify_secret FROM users WHERE id = ?`, id).Scan(&secret)
	if len(secret) != 64 {
		t.Fatalf("secret %q after the first target", secret)
	}
	if s, _ := db.NotifySecret(ctx, id); s != secret {
		t.Fatal("the secret changed on reading")
	}
	mail := NotifyTarget{UserID: id, Kind: NotifyEmail, Address: "a@example.org", Events: []string{"all"}}
	if err := db.AddNotifyTargets(ctx, []NotifyTarget{hook(1), mail}, 3); !errors.Is(err, ErrEmailUnconfirmed) {
		t.Fatalf("unconfirmed e-mail: %v", err)
	}
	if err := db.RegisterEmail(ctx, id, "a@example.org", EmailByAdmin); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTargets(ctx, []NotifyTarget{hook(1), mail}, 3); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTargets(ctx, []NotifyTarget{hook(0), hook(3)}, 3); !errors.Is(err, ErrTooManyTargets) {
		t.Fatalf("a fourth target: %v", err)
	}
	if ts, _ := db.NotifyTargets(ctx, id); len(ts) != 3 {
		t.Fatalf("%d targets after a refused batch, want 3", len(ts))
	}
	if ok, _ := db.EmailConfirmed(ctx, id+1, "a@example.org"); ok {
		t.Fatal("another user's address counts as confirmed")
	}
}

// TestClaimDeliveriesTakesUsersInTurn: with one user's many deliveries
// due first, a claim still takes the other user's, and never more of one
// user than PerUser, those in flight counted.
func TestClaimDeliveriesTakesUsersInTurn(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	a, _ := db.AddUser(ctx, "alice", "ha")
	b, _ := db.AddUser(ctx, "bob", "hb")
	var ts []NotifyTarget
	for i := range 10 {
		ts = append(ts, NotifyTarget{UserID: a, Kind: NotifyWebhook, Address: fmt.Sprintf("https://a.example.org/%d", i), Events: []string{"all"}})
	}
	if err := db.AddNotifyTargets(ctx, ts, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: b, Kind: NotifyWebhook, Address: "https://b.example.org/", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	addTestEvent(t, db, a, "a1")
	addTestEvent(t, db, b, "b1")
	if _, err := db.FanOut(ctx, 100); err != nil {
		t.Fatal(err)
	}
	users := func(ds []Delivery) []int64 {
		var out []int64
		for _, d := range ds {
			out = append(out, d.Target.UserID)
			if d.Secret == "" {
				t.Errorf("delivery %d without its user's secret", d.ID)
			}
		}
		return out
	}
	// Alice has 2 in flight here already: 2 more of hers at most.
	ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 8, PerUser: 4, Busy: map[int64]int{a: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got := users(ds)
	if len(got) != 3 || !slices.Contains(got, b) || slices.Index(got, b) > 1 {
		t.Fatalf("claimed users %v, want bob's in the first turn and 2 of alice's", got)
	}
	// Bob's one is in flight now: alice's remain.
	ds, _ = db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 1, PerUser: 4})
	if len(ds) != 1 || ds[0].Target.UserID != a {
		t.Fatalf("then: %v", users(ds))
	}
}

// TestMigrateV10 registers the administrator's e-mail targets (for all
// groups) and makes secrets for users with targets; a submission's
// address (of one group) stays unconfirmed.
func TestMigrateV10(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	a, _ := db.AddUser(ctx, "alice", "ha")
	b, _ := db.AddUser(ctx, "bob", "hb")
	c, _ := db.AddUser(ctx, "carol", "hc")
	for _, q := range []struct {
		user      int64
		grp, kind string
		addr      string
	}{{a, "", "email", "alice@example.org"}, {a, "g", "email", "victim@example.org"}, {b, "g", "webhook", "https://b.example.org/"}} {
		if _, err := db.sql.Exec(`INSERT INTO notify_targets(user_id, grp, kind, address, event_types, created) VALUES (?,?,?,?,'all',1)`,
			q.user, q.grp, q.kind, q.addr); err != nil {
			t.Fatal(err)
		}
	}
	db.sql.Exec(`UPDATE users SET notify_secret = ''`)
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return migrateV10(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.EmailConfirmed(ctx, a, "alice@example.org"); !ok {
		t.Error("the administrator's address is not registered")
	}
	if ok, _ := db.EmailConfirmed(ctx, a, "victim@example.org"); ok {
		t.Error("a submission's address counts as confirmed")
	}
	for id, want := range map[int64]bool{a: true, b: true, c: false} {
		var s string
		db.sql.QueryRow(`SELECT notify_secret FROM users WHERE id = ?`, id).Scan(&s)
		if (len(s) == 64) != want {
			t.Errorf("user %d: secret %q", id, s)
		}
	}
}
