package store

import (
	"context"
	"fmt"
	"testing"
)

// TestDeleteChainsManyChunks: a failed submission of more chains than one
// statement names removes every chain it still owns, with its steps and
// inputs, across the statements' chunks, and keeps one the creator took
// over, wherever it falls.
func TestDeleteChainsManyChunks(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	uid, err := db.AddUser(ctx, "alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	n := deleteChainsChunk + 7
	ncs := make([]NewChain, n)
	for i := range ncs {
		ncs[i] = NewChain{Chain: Chain{Group: "g", Name: fmt.Sprintf("c%d", i), Queue: "q", App: "a", NSteps: 2, Params: "{}", Layout: "{}"},
			Inputs: []string{fmt.Sprintf("%032x", i), "0123456789abcdef0123456789abcdef"}}
	}
	cs, err := db.CreateChains(ctx, User{ID: uid, Name: "alice"}, ncs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	// One in each chunk was taken over by the creator (another owner).
	kept := []int64{ids[3], ids[deleteChainsChunk+2]}
	for _, id := range kept {
		if _, err := db.sql.ExecContext(ctx, `UPDATE steps SET owner = 'another' WHERE chain_id = ?`, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteChains(ctx, append(ids, ids[0])); err != nil { // a repeat changes nothing
		t.Fatal(err)
	}
	for _, q := range []struct{ sql, what string }{
		{`SELECT count(*) FROM chains`, "chains"},
		{`SELECT count(*) FROM steps`, "steps"},
		{`SELECT count(*) FROM chain_inputs`, "chain inputs"},
	} {
		var got int
		if err := db.sql.QueryRowContext(ctx, q.sql).Scan(&got); err != nil {
			t.Fatal(err)
		}
		want := len(kept)
		if q.what == "chain inputs" {
			want *= 2
		}
		if got != want {
			t.Errorf("%d %s left, want %d (the creator's)", got, q.what, want)
		}
	}
	for _, id := range kept {
		var owner string
		if err := db.sql.QueryRowContext(ctx, `SELECT owner FROM steps WHERE chain_id = ? AND step = 0`, id).Scan(&owner); err != nil || owner != "another" {
			t.Errorf("chain %d taken over by the creator: owner %q, %v", id, owner, err)
		}
	}
}
