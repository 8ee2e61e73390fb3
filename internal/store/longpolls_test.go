package store

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TestLongPollSlots: a user's long polls are counted up to the cap,
// another user's apart; a slot given back is free, and so is the slot of
// a poll whose process died without giving it back, once it expires.
func TestLongPollSlots(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	alice, _ := db.AddUser(ctx, "alice", "h1")
	bob, _ := db.AddUser(ctx, "bob", "h2")
	soon := time.Now().Add(time.Minute)
	var ids []int64
	for i := range 3 {
		id, ok, err := db.TakeLongPoll(ctx, alice, 3, soon)
		if err != nil || !ok {
			t.Fatalf("alice's poll %d of 3: %v %v", i+1, ok, err)
		}
		ids = append(ids, id)
	}
	if _, ok, err := db.TakeLongPoll(ctx, alice, 3, soon); err != nil || ok {
		t.Fatalf("alice's fourth poll with a cap of 3: taken %v (%v)", ok, err)
	}
	if _, ok, err := db.TakeLongPoll(ctx, bob, 3, soon); err != nil || !ok {
		t.Fatalf("bob's poll refused while alice is at her cap: %v", err)
	}
	if err := db.ReleaseLongPoll(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.TakeLongPoll(ctx, alice, 3, soon); err != nil || !ok {
		t.Fatalf("alice's poll after one ended: refused (%v)", err)
	}
	// A process killed mid-poll never gives its slot back: it frees
	// itself when it expires.
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE long_polls SET expires = ? WHERE id = ?`, time.Now().Add(-time.Second).Unix(), ids[1])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.TakeLongPoll(ctx, alice, 3, soon); err != nil || !ok {
		t.Fatalf("alice's poll once a dead poll's slot expired: refused (%v)", err)
	}
	if _, ok, err := db.TakeLongPoll(ctx, alice, 3, soon); err != nil || ok {
		t.Fatalf("alice over her cap again: taken %v (%v)", ok, err)
	}
	if _, ok, err := db.TakeLongPoll(ctx, alice, 0, soon); err != nil || !ok {
		t.Fatalf("no cap (0): refused (%v)", err)
	}
}
