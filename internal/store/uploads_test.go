package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestUploadsCapped: a user has at most max upload collections, also when
// they ask for many at once; OldUploads lists those made before a time,
// with their owners.
func TestUploadsCapped(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	alice, err := db.AddUser(ctx, "alice", "h1")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := db.AddUser(ctx, "bob", "h2")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, refused := 0, 0
	for i := range 30 {
		wg.Go(func() {
			open, err := db.AddUpload(ctx, fmt.Sprintf("a%d", i), alice, 10)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made++
			case errors.Is(err, ErrLimit) && open == 10:
				refused++
			default:
				t.Errorf("upload %d: %d, %v", i, open, err)
			}
		})
	}
	wg.Wait()
	if made != 10 || refused != 20 {
		t.Fatalf("made %d, refused %d; want 10 and 20", made, refused)
	}
	if _, err := db.AddUpload(ctx, "b0", bob, 10); err != nil {
		t.Fatalf("bob: %v", err)
	}
	if _, err := db.AddUpload(ctx, "a-nolimit", alice, 0); err != nil {
		t.Fatalf("no limit: %v", err)
	}
	old, err := db.OldUploads(ctx, now()+1)
	if err != nil || len(old) != 12 {
		t.Fatalf("old uploads: %v, %v", old, err)
	}
	if none, err := db.OldUploads(ctx, now()-10); err != nil || len(none) != 0 {
		t.Fatalf("uploads made before now: %v, %v", none, err)
	}
	for _, u := range old {
		if want := map[bool]string{true: "bob", false: "alice"}[u.ID == "b0"]; u.User != want {
			t.Errorf("upload %s of %q, want %q", u.ID, u.User, want)
		}
	}
}
