package fsync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// A file made by CreateExcl has exactly the mode asked for, also where the
// umask would narrow it (the pool's files must stay readable by the web
// server that BOINC's clients download them from).
func TestCreateExclModeDespiteUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	saved := umask
	umask = 0o077
	defer func() { umask = saved }()
	p := filepath.Join(t.TempDir(), "f")
	f, err := CreateExcl(p, 0o444)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("mode %v, %v; want 0444", fi.Mode().Perm(), err)
	}
	if _, err := CreateExcl(p, 0o444); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v", err)
	}
}

func TestDataAllOpensEachOnceAndClosesAll(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range dataWindow + 100 {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(es)
	}
	before := fds()
	if err := DataAll(paths); err != nil {
		t.Fatal(err)
	}
	// A file gone half-way: named in the error, every descriptor closed.
	gone := filepath.Join(dir, "gone")
	bad := append(slices.Clone(paths[:dataWindow+10]), gone)
	bad = append(bad, paths[dataWindow+10:]...)
	err := DataAll(bad)
	if err == nil || !strings.Contains(err.Error(), gone) {
		t.Fatalf("DataAll with a missing file: %v", err)
	}
	if after := fds(); after != before {
		t.Fatalf("%d descriptors open before, %d after", before, after)
	}
}
