package master_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestReadmeMaster: the smallest master of docs/master.md (once the
// README's; the page's marker names this test) is under 40 lines,
// builds, and runs to its end against a real server on the stand-in,
// beside a chain of the same user submitted as rboinc-submit does: it
// counts only its own two work units, and the other chain's results stay
// for rboinc-retrieve.
func TestReadmeMaster(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	b, err := os.ReadFile("../../docs/master.md")
	if err != nil {
		t.Fatal(err)
	}
	const mark = "<!-- master: TestReadmeMaster in workflow/master runs this program -->\n```go\n"
	_, rest, ok := strings.Cut(string(b), mark)
	if !ok {
		t.Fatal("docs/master.md has no master program after its marker")
	}
	code, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("the master program of docs/master.md does not end")
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
		t.Fatalf("building docs/master.md's master: %v\n%s", err, out)
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
	// Another group's chain of two steps, finishing while the master runs.
	c, err := client.New(s.URL, tok)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, err := c.Queue(ctx, "langevin")
	if err != nil {
		t.Fatal(err)
	}
	chains, err := client.BuildChains(q, nil, []client.Job{{Name: "r", Files: inputs(), Line: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitChains(ctx, client.SubmitInput{Queue: "langevin", Group: "sci", Options: wire.Options{NumSteps: 2}, Chains: chains}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "RBOINC_URL="+s.URL, "RBOINC_TOKEN="+tok)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/master.md's master: %v\n%s", err, out)
	}
	for _, name := range []string{"a", "b"} {
		if !strings.Contains(string(out), name+" result  "+filepath.Join("results", "master", name)+"/") {
			t.Errorf("no result of %s in its output:\n%s", name, out)
		}
	}
	if n := strings.Count(string(out), "\n"); n != 2 {
		t.Errorf("docs/master.md's master reported %d work units, want its 2:\n%s", n, out)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, err := c.Status(ctx, "sci", "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Chains[0].State == wire.StateDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other chain is not done: %+v", st.Chains[0])
		}
	}
	if res, err := c.Results(ctx, "sci", ""); err != nil || len(res.Files) != 6 {
		t.Errorf("the other chain's results on the server: %d files, %v; want all 6, for rboinc-retrieve", len(res.Files), err)
	}
}
