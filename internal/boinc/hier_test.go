package boinc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/md5sum"
)

func TestFilenameHash(t *testing.T) {
	// Worked examples from the BOINC source and from a real project.
	cases := map[string]string{
		"foo": "db", "input.dat": "3e7", "wu_0_r123_0": "3f5",
		"a_in1.coor": "17f", "c_in1.psf": "31", "nonexist2.coor": "c4", "flat_1.coor": "a6",
		"p2_in.coor": "387", "p2_0_r1176225829_0": "54", "s4_multi_0_r1749361910_1": "86",
	}
	for name, want := range cases {
		if got := FilenameHash(name, 1024); got != want {
			t.Errorf("FilenameHash(%q) = %q, want %q", name, got, want)
		}
	}
	if HierPath("/d", "foo", 0) != "/d/foo" || HierPath("/d", "foo", 1024) != "/d/db/foo" {
		t.Error("HierPath")
	}
}

func TestSidecar(t *testing.T) {
	if got := SidecarText("b7e2965e49b6f77dd279e1b0a0dbefb4", 13); got != "b7e2965e49b6f77dd279e1b0a0dbefb4 1.300000000000000e+01\n" {
		t.Fatalf("SidecarText = %q", got)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	if _, _, ok := ReadSidecar(p); ok {
		t.Fatal("missing sidecar read as ok")
	}
	sum, n, err := md5sum.File(p)
	if err != nil || n != 5 {
		t.Fatal(err)
	}
	if err := WriteSidecar(p, sum, n); err != nil {
		t.Fatal(err)
	}
	s2, n2, ok := ReadSidecar(p)
	if !ok || s2 != sum || n2 != 5 {
		t.Fatalf("ReadSidecar = %q %d %v", s2, n2, ok)
	}
	// A plain integer size (PHP's form) is accepted too.
	os.WriteFile(p+".md5", []byte(sum+" 5\n"), 0o644)
	if _, n3, ok := ReadSidecar(p); !ok || n3 != 5 {
		t.Fatal("integer size form refused")
	}
	// Older than the data file: stale.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p+".md5", old, old)
	if _, _, ok := ReadSidecar(p); ok {
		t.Fatal("stale sidecar accepted")
	}
	os.WriteFile(p+".md5", []byte(sum+" 5\n\n"), 0o644)
	if _, _, ok := ReadSidecar(p); ok {
		t.Fatal("two newlines accepted")
	}
}

func TestCreateSidecarLeavesOneThere(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	const sum = "5d41402abc4b2a76b9719d911017c592"
	if err := CreateSidecar(p, sum, 5); err != nil {
		t.Fatal(err)
	}
	if got, n, ok := ReadSidecar(p); !ok || got != sum || n != 5 {
		t.Fatalf("ReadSidecar = %s %d %v", got, n, ok)
	}
	if err := CreateSidecar(p, "00000000000000000000000000000000", 1); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second CreateSidecar: %v, want an error matching fs.ErrExist", err)
	}
	if got, _, _ := ReadSidecar(p); got != sum {
		t.Fatalf("the sidecar there was changed: %s", got)
	}
}
