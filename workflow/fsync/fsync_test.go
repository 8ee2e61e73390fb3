package fsync

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// What can be checked without pulling the power: the calls succeed on
// what they are given, fail on what is missing, and Barrier changes its
// directory (the change its fsync commits) and leaves nothing in it.
func TestDataAndBarrier(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DataPath(p); err != nil {
		t.Fatal(err)
	}
	if err := DataPath(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	if err := Barrier(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("the barrier did not change its directory: %v, %v", fi.ModTime(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the barrier left %d entries", len(ents))
	}
	if err := Barrier(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a barrier on a missing directory succeeded")
	}
}
