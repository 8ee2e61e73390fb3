package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A pool file made durable once is not synced again while it is the same
// file; written anew under its name (collected, then brought again), it is.
func TestSyncedSetKnowsTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c")
	if err := os.WriteFile(p, []byte("content\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	var s syncedSet
	id, ok := identity(p)
	if !ok || s.has("c", id) {
		t.Fatalf("identity %v, known before any sync: %v", ok, s.has("c", id))
	}
	s.add(map[string]fileID{"c": id})
	if again, _ := identity(p); !s.has("c", again) {
		t.Fatal("the same file is not known as synced")
	}
	os.Remove(p)
	time.Sleep(2 * time.Millisecond)
	if err := os.WriteFile(p, []byte("content\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if anew, _ := identity(p); s.has("c", anew) {
		t.Fatal("a file written anew under the name counts as synced")
	}
	if _, ok := identity(filepath.Join(t.TempDir(), "missing")); ok {
		t.Fatal("a missing file has an identity")
	}
}
