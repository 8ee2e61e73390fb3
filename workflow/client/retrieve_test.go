package client

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

func TestAlreadyPresent(t *testing.T) {
	dir := t.TempDir()
	rf := wire.ResultFile{Name: "w_1", Aliases: []string{".log.gz", ".log"}}
	if AlreadyPresent(dir, rf) {
		t.Fatal("present in an empty directory")
	}
	for _, name := range []string{"w_1", "w_1.log.gz", "w_1.log"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o644)
		if !AlreadyPresent(dir, rf) {
			t.Errorf("%s not seen as present", name)
		}
		os.Remove(p)
	}
	os.WriteFile(filepath.Join(dir, "w_1.dcd"), nil, 0o644)
	if AlreadyPresent(dir, rf) {
		t.Error("a name with an unrelated extension counts as present")
	}
	if LocalName(rf) != "w_1.log.gz" || LocalName(wire.ResultFile{Name: "w_0"}) != "w_0" {
		t.Error("LocalName")
	}
}

func TestLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir)
	if !errors.Is(err, ErrLocked) || ExitCode(err) != ExitLocked || err.Error() != "another rboinc-retrieve is running in "+dir {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestRetrieve(t *testing.T) {
	f, c := newFake(t)
	a := f.addResult("g", "c1", "c1-U_g-0-2-RND0001_0", []byte("log a"), ".log.gz", ".log")
	b := f.addResult("g", "c1", "c1-U_g-0-2-RND0001_1", []byte("dcd b"), ".dcd")
	d := f.addResult("g", "c2", "c2-U_g-0-1-RND0002_0", []byte("log d"), ".log.gz", ".log")
	broken := f.addResult("g", "c2", "c2-U_g-0-1-RND0002_1", []byte("dcd e"))
	f.files[broken.Path] = []byte("tampered")
	f.results = append(f.results, wire.ResultFile{Group: "g", Chain: "c2", Name: "../evil", MD5: a.MD5, Path: a.Path})

	dir := t.TempDir()
	// The scientist already decompressed a.
	os.WriteFile(filepath.Join(dir, a.Name+".log"), []byte("log a"), 0o644)

	var announced int
	rep, err := c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir,
		OnDownload: func(files int, bytes int64) func(int64) { announced = files; return nil }})
	if !errors.Is(err, ErrPartial) || ExitCode(err) != ExitPartial {
		t.Fatalf("err = %v", err)
	}
	if rep.Total != 5 || rep.Retrieved != 2 || rep.Present != 1 || len(rep.Failed) != 2 || announced != 3 {
		t.Fatalf("report %+v, announced %d", rep, announced)
	}
	for _, name := range []string{b.Name + ".dcd", d.Name + ".log.gz"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not downloaded: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, broken.Name)); err == nil {
		t.Error("a damaged file was kept")
	}
	slices.Sort(f.acked)
	want := []string{a.Name, b.Name, d.Name}
	if !slices.Equal(f.acked, want) {
		t.Errorf("acked %v, want %v (present and downloaded, never failed)", f.acked, want)
	}
	for _, fl := range rep.Failed {
		if fl.Name == "../evil" && !strings.Contains(fl.Error, "unsafe") {
			t.Errorf("unsafe name: %s", fl.Error)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".part-") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

func TestRetrieveTreeKeep(t *testing.T) {
	f, c := newFake(t)
	a := f.addResult("g", "c1", "c1-U_g-0-1-RND0001_0", []byte("A"), ".log")
	b := f.addResult("g", "c2", "c2-U_g-0-1-RND0002_0", []byte("B"), ".log")
	dir := filepath.Join(t.TempDir(), "new")
	rep, err := c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir, Tree: true, Keep: true})
	if err != nil || rep.Retrieved != 2 {
		t.Fatalf("Retrieve = %+v, %v", rep, err)
	}
	for _, p := range []string{filepath.Join(dir, "c1", a.Name+".log"), filepath.Join(dir, "c2", b.Name+".log")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if len(f.acked) != 0 {
		t.Errorf("-keep acknowledged %v", f.acked)
	}
	// Second run: everything present, acknowledged now that -keep is off.
	rep, err = c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir, Tree: true})
	if err != nil || rep.Present != 2 || rep.Retrieved != 0 || len(f.acked) != 2 || rep.Acknowledged != 2 {
		t.Fatalf("second run %+v, %v, acked %v", rep, err, f.acked)
	}
}

func TestRetrieveLocked(t *testing.T) {
	f, c := newFake(t)
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir})
	if ExitCode(err) != ExitLocked {
		t.Fatalf("err = %v", err)
	}
	if f.requests != 0 {
		t.Error("the server was asked while the lock was held elsewhere")
	}
}
