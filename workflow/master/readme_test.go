package master_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/standinserver"
)

// TestReadmeMaster: the smallest master of README.md is under 40 lines,
// builds, and runs to its end against a real server on the stand-in.
func TestReadmeMaster(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const mark = "<!-- master: TestReadmeMaster in workflow/master runs this program -->\n```go\n"
	_, rest, ok := strings.Cut(string(b), mark)
	if !ok {
		t.Fatal("README.md has no master program after its marker")
	}
	code, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("the README's master program does not end")
	}
	if n := strings.Count(code, "\n") + 1; n >= 40 {
		t.Errorf("the smallest master is %d lines, want under 40", n)
	}
	// Built inside the module (a hidden directory: no pattern matches it).
	src, err := os.MkdirTemp(".", ".readme-master")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(code+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "master")
	if out, err := exec.Command("go", "build", "-o", exe, "./"+filepath.Base(src)).CombinedOutput(); err != nil {
		t.Fatalf("building the README's master: %v\n%s", err, out)
	}
	s := standinserver.Start(t, standinserver.Options{})
	tok, err := s.AddUser("scientist")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, f := range []string{"input.coor", "input.vel"} {
		b, err := os.ReadFile(filepath.Join(langevin, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(work, f), b, 0o644)
	}
	cmd := exec.Command(exe)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "RBOINC_URL="+s.URL, "RBOINC_TOKEN="+tok)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's master: %v\n%s", err, out)
	}
	for _, name := range []string{"a", "b"} {
		if !strings.Contains(string(out), name+" result  "+filepath.Join("results", "master", name)+"/") {
			t.Errorf("no result of %s in its output:\n%s", name, out)
		}
	}
}
