package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSourceHashFollowsTheProgramsSource: a change to what a build reads
// makes a new build directory; a change to tests or testdata does not.
func TestSourceHashFollowsTheProgramsSource(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hash := func() string {
		t.Helper()
		h, _, err := sourceHash(root)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	write("go.mod", "module x\n")
	write("cmd/a/main.go", "package main\nfunc main() {}\n")
	write("internal/t/page.html", "<p>")
	h0 := hash()
	write("cmd/a/main_test.go", "package main\n")
	write("cmd/a/testdata/in", "x")
	write(".git/HEAD", "ref")
	if h := hash(); h != h0 {
		t.Errorf("a test file changed the hash")
	}
	for _, f := range []string{"cmd/a/main.go", "internal/t/page.html", "go.mod", "go.sum"} {
		write(f, "changed "+f)
		h := hash()
		if h == h0 {
			t.Errorf("changing %s left the hash", f)
		}
		h0 = h
	}
}
