package md5sum

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, n, err := File(p)
	if err != nil || sum != "b1946ac92492d2347c6235b4d2611184" || n != 6 {
		t.Errorf("File = %s %d %v", sum, n, err)
	}
	if _, _, err := File(p + "x"); err == nil {
		t.Error("a missing file: no error")
	}
}
