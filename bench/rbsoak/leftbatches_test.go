package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
)

// The batches left on the server are named with their users, groups and
// job counts; a retired one is not among them.
func TestBatchNames(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := batchNames(ctx, st); err != nil || len(got) != 0 {
		t.Fatalf("an empty state: %v, %v", got, err)
	}
	uid, err := st.AddUser(ctx, "soak1", "h")
	if err != nil {
		t.Fatal(err)
	}
	var retired store.Batch
	for i, name := range []string{"gahp031", "gahp032"} {
		b := store.Batch{UserID: uid, Name: name, Group: name, Queue: "langevin"}
		jobs := []store.BatchJob{{Name: name + "j0", Chain: "j0"}, {Name: name + "j1", Chain: "j1"}}
		if b.ID, err = st.CreateBatch(ctx, b, jobs[:i+1]); err != nil {
			t.Fatal(err)
		}
		retired = b
	}
	if err := st.DropBatch(ctx, retired); err != nil {
		t.Fatal(err)
	}
	got, err := batchNames(ctx, st)
	if want := []string{"soak1/gahp031 (group gahp031, 1 job)"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("batchNames: %q, %v; want %q", got, err, want)
	}
}
