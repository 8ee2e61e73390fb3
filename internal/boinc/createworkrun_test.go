package boinc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeCreateWork installs bin/create_work as a script that copies its input
// to got.txt and, only once the input has ended, writes inserted.txt (as
// BOINC inserts its jobs only then), or fails with a message when the
// input names a job "bad".
func fakeCreateWork(t *testing.T) *Project {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "templates"), 0o755)
	os.WriteFile(filepath.Join(dir, "templates", "r_out"), []byte("<file_info/>"), 0o644)
	script := `#!/bin/sh
cat > got.txt
if grep -q -- "--wu_name bad " got.txt; then echo "create_work: bad job" >&2; exit 1; fi
echo "$@" > inserted.txt
`
	if err := os.WriteFile(filepath.Join(dir, "bin", "create_work"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Project{Dir: dir}
}

func job(name string) Job {
	return Job{WUName: name, WUTemplate: "templates/w_in", ResultTemplate: "templates/r_out", Priority: 2, Files: []string{"jf_a", "jf_b"}}
}

func TestCreateWorkRunFeedsJobsAndFinishes(t *testing.T) {
	p := fakeCreateWork(t)
	r, err := StartCreateWork(context.Background(), p, WorkParams{App: "langevin", MaxErrorResults: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"w1", "w2", "w3"} {
		if err := r.Add(job(n)); err != nil {
			t.Fatal(err)
		}
		if n == "w2" {
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(p.Dir, "got.txt"))
	want := job("w1").Line() + "\n" + job("w2").Line() + "\n" + job("w3").Line() + "\n"
	if string(got) != want || r.Jobs() != 3 {
		t.Fatalf("create_work read %q (%d jobs), want %q", got, r.Jobs(), want)
	}
	args, _ := os.ReadFile(filepath.Join(p.Dir, "inserted.txt"))
	if strings.TrimSpace(string(args)) != "--appname langevin --max_error_results 5 --stdin" {
		t.Fatalf("arguments %q", args)
	}
	if err := r.Finish(); err == nil {
		t.Fatal("a second Finish succeeded")
	}
}

func TestCreateWorkRunAbortCreatesNothing(t *testing.T) {
	p := fakeCreateWork(t)
	// A wrapper that does not exec: the part that inserts is a child.
	os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte("#!/bin/sh\nexec 3<&0\n( cat <&3 > got.txt; echo > inserted.txt ) &\nwait\n"), 0o755)
	r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
	if err != nil {
		t.Fatal(err)
	}
	r.Add(job("w1"))
	r.Flush()
	time.Sleep(50 * time.Millisecond) // create_work has read the job
	r.Abort()
	r.Abort() // harmless
	if _, err := os.Stat(filepath.Join(p.Dir, "inserted.txt")); err == nil {
		t.Fatal("an aborted run inserted its jobs")
	}
}

func TestCreateWorkRunRefusals(t *testing.T) {
	p := fakeCreateWork(t)
	r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
	if err != nil {
		t.Fatal(err)
	}
	bad := job("w1")
	bad.ResultTemplate = "templates/missing"
	if err := r.Add(bad); err == nil || !strings.Contains(err.Error(), "result template templates/missing is missing") {
		t.Fatalf("missing result template: %v", err)
	}
	quoted := job("w'1")
	if err := r.Add(quoted); err == nil || !strings.Contains(err.Error(), "refusing quote") {
		t.Fatalf("quote: %v", err)
	}
	// create_work's own refusal comes back with its message.
	if err := r.Add(job("bad")); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(); err == nil || !strings.Contains(err.Error(), "create_work: bad job") {
		t.Fatalf("create_work failure: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "inserted.txt")); err == nil {
		t.Fatal("a failed run inserted its jobs")
	}
}

func TestCreateWorkRunReportsAnEarlyExit(t *testing.T) {
	p := fakeCreateWork(t)
	os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte("#!/bin/sh\necho 'create_work: app not found' >&2\nexit 1\n"), 0o755)
	r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
	if err != nil {
		t.Fatal(err)
	}
	// Feed far more than a pipe holds: the writes fail once it has exited.
	var ferr error
	for i := 0; i < 5000 && ferr == nil; i++ {
		if ferr = r.Add(job("w")); ferr == nil && i%100 == 0 {
			ferr = r.Flush()
		}
	}
	if ferr == nil {
		ferr = r.Finish()
	} else {
		r.Abort()
	}
	if ferr == nil || !strings.Contains(ferr.Error(), "app not found") {
		t.Fatalf("early exit: %v", ferr)
	}
}
