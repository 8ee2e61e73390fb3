package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// TestGroupHasOneConsumer: the transaction that records chains refuses a
// group whose live chains have another consumer, and a submission mixing
// two in one group; a purged group is free again.
func TestGroupHasOneConsumer(t *testing.T) {
	db, u := openBatchDB(t)
	ctx := context.Background()
	mk := func(consumer, group, name string) NewChain {
		nc := batchChain(group, name, md5n(1))
		nc.Consumer = consumer
		return nc
	}
	if _, err := db.CreateChains(ctx, u, []NewChain{mk("master", "a", "x")}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GroupConsumer(ctx, u.ID, "a"); err != nil || got != "master" {
		t.Fatalf("GroupConsumer(a) = %q, %v", got, err)
	}
	if _, err := db.GroupConsumer(ctx, u.ID, "none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GroupConsumer of no group: %v", err)
	}
	if _, err := db.CreateChains(ctx, u, []NewChain{mk("", "a", "y")}); !errors.Is(err, ErrOtherConsumer) {
		t.Fatalf("rboinc-submit's chain in a master's tag: %v", err)
	}
	if _, err := db.CreateChains(ctx, u, []NewChain{mk("", "m", "y"), mk("master", "m", "z")}); !errors.Is(err, ErrOtherConsumer) {
		t.Fatalf("two consumers in one submission's group: %v", err)
	}
	if _, err := db.CreateChains(ctx, u, []NewChain{mk("master", "a", "y")}); err != nil {
		t.Fatalf("the master adds to its tag: %v", err)
	}
	if _, err := db.SQL().ExecContext(ctx, `UPDATE chains SET state = 'purged' WHERE grp = 'a'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateChains(ctx, u, []NewChain{mk("", "a", "w")}); err != nil {
		t.Fatalf("a purged tag taken by rboinc-submit: %v", err)
	}
}

// TestBatchChainsGoToTheGAHP: the migration that gives chains a consumer
// gives those of batches the GAHP's, the others none (rboinc-retrieve's).
func TestBatchChainsGoToTheGAHP(t *testing.T) {
	db, u := openBatchDB(t)
	ctx := context.Background()
	if _, err := db.CreateBatch(ctx, Batch{UserID: u.ID, Name: "condor#1", Group: "bg", Queue: "q"}, []BatchJob{{Name: "j", Chain: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateChains(ctx, u, []NewChain{batchChain("bg", "x", md5n(1)), batchChain("sci", "x", md5n(1))}); err != nil {
		t.Fatal(err)
	}
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return batchConsumers(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	for group, want := range map[string]string{"bg": "batch", "sci": ""} {
		if got, err := db.GroupConsumer(ctx, u.ID, group); err != nil || got != want {
			t.Errorf("group %s: consumer %q, %v; want %q", group, got, err, want)
		}
	}
}
