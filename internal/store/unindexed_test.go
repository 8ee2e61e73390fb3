package store

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// Owner rows of contents with no pool row go, a batch at a time, in MD5
// order; those of a content a live chain reads stay and are passed over;
// those of a pooled content stay.
func TestForgetStrayOwners(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	if _, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "kept", md5n(1), md5n(2))}); err != nil {
		t.Fatal(err)
	}
	if err := db.PoolAddAll(ctx, []PoolEntry{{MD5: md5n(3), Size: 1}}); err != nil {
		t.Fatal(err)
	}
	var all []string
	for i := 1; i <= 6; i++ {
		all = append(all, md5n(i))
	}
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return ownRows(ctx, tx, u.ID, all) }); err != nil {
		t.Fatal(err)
	}
	total, cursor := 0, ""
	for range 4 {
		k, next, err := db.ForgetStrayOwners(ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		total, cursor = total+k, next
		if cursor == "" {
			break
		}
	}
	owned, err := db.PoolOwned(ctx, u.ID, all)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, m := range all {
		if owned[m] {
			left = append(left, m)
		}
	}
	slices.Sort(left)
	want := []string{md5n(1), md5n(2), md5n(3)}
	slices.Sort(want)
	if total != 3 || !slices.Equal(left, want) || cursor != "" {
		t.Fatalf("freed %d contents, owner rows left for %v (want %v), cursor %q", total, left, want, cursor)
	}
}
