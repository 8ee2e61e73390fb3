package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestCollectBoundsItsWriteLock: pool collection over many contents holds
// the state database's write lock a batch at a time, not for the whole
// pool. Removing the files of a hundred thousand contents in one
// transaction held the lock past the busy timeout, and every other writer
// (the assimilator, the notifier, the creator) failed with SQLITE_BUSY.
func TestCollectBoundsItsWriteLock(t *testing.T) {
	defer func(n int) { collectBatch = n }(collectBatch)
	collectBatch = 50
	ctx := context.Background()
	db, u := openBatchDB(t)
	// Two contents an unfinished step reads; the rest nothing refers to.
	if _, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "kept", md5n(1), md5n(2))}); err != nil {
		t.Fatal(err)
	}
	const n = 1020
	var entries []PoolEntry
	for i := 1; i <= n; i++ {
		entries = append(entries, PoolEntry{MD5: md5n(i), Size: 1})
	}
	if err := db.PoolAddAll(ctx, entries); err != nil {
		t.Fatal(err)
	}
	// Removing a content's files takes a while (here 10 ms): the longest
	// write transaction must stay far below removing them all. (At 2 ms, a
	// batch on MariaDB at load 32 took longer than half of the whole.)
	const perContent = 10 * time.Millisecond
	var gone, links []string
	most := 0
	LongestWriteHold(true)
	err := db.Collect(ctx, now()+1, func(g, l []string) error {
		gone, links = append(gone, g...), append(links, l...)
		most = max(most, len(g), len(l))
		time.Sleep(time.Duration(max(len(g), len(l))) * perContent)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	longest := LongestWriteHold(true)
	if most > collectBatch {
		t.Errorf("one call of remove got %d contents: the write lock was held over more than a batch of %d", most, collectBatch)
	}
	// The batches hold it about a twentieth of that each; the margin is
	// for a loaded machine.
	t.Logf("longest write transaction: %v", longest)
	if all := time.Duration(n) * perContent; longest > all/2 {
		t.Errorf("the longest write transaction of the collection held the lock %v; removing all %d contents takes %v", longest, n, all)
	}
	want := make([]string, 0, n-2)
	for i := 3; i <= n; i++ {
		want = append(want, md5n(i))
	}
	slices.Sort(gone)
	slices.Sort(links)
	if !slices.Equal(gone, want) || !slices.Equal(links, want) {
		t.Fatalf("collected %d contents and %d links, want the %d nothing reads (not %s, %s)", len(gone), len(links), len(want), md5n(1), md5n(2))
	}
	var left int
	if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM pool`).Scan(&left); err != nil || left != 2 {
		t.Fatalf("pool rows left: %d (%v), want 2", left, err)
	}
}
