package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write and Copy leave the file whole, with its mode, and no temporary
// file beside it.
func TestWriteCopy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if err := Write(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "hello\n" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	sum, n, err := Copy(p, filepath.Join(dir, "b"), 0o444)
	if err != nil || sum != "b1946ac92492d2347c6235b4d2611184" || n != 6 {
		t.Errorf("Copy = %s %d %v", sum, n, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "b")); fi.Mode().Perm() != 0o444 {
		t.Errorf("copy's mode %v", fi.Mode())
	}
	if err := Write(filepath.Join(dir, "no", "c"), nil, 0o600); err == nil {
		t.Error("a missing directory: no error")
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Errorf("left in the directory: %v", es)
	}
}
