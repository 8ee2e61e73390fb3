//go:build linux

package boinc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// callerEnv makes the test binary the process that feeds create_work (see
// TestCreateWorkDiesWithItsCaller): it starts create_work in the project
// directory the variable names, hands it one job and waits to be killed.
const callerEnv = "RBOINC_TEST_CREATE_WORK_CALLER"

func init() {
	dir := os.Getenv(callerEnv)
	if dir == "" {
		return
	}
	r, err := StartCreateWork(context.Background(), &Project{Dir: dir}, WorkParams{App: "a"})
	if err == nil {
		if err = r.Add(job("w1")); err == nil {
			err = r.Flush()
		}
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// TestCreateWorkDiesWithItsCaller: a server killed (kill -9) while it feeds
// create_work takes create_work with it. Otherwise create_work sees its
// input end and inserts the jobs fed so far, whose chains the dead server
// never recorded.
func TestCreateWorkDiesWithItsCaller(t *testing.T) {
	p := fakeCreateWork(t)
	caller := exec.Command(os.Args[0], "-test.run=^$")
	caller.Env = append(os.Environ(), callerEnv+"="+p.Dir)
	var out strings.Builder
	caller.Stderr = &out
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(p.Dir, "got.txt")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(got); strings.Contains(string(b), "--wu_name w1 ") {
			break
		}
		if time.Now().After(deadline) {
			caller.Process.Kill()
			t.Fatalf("create_work never read its job: %s", out.String())
		}
	}
	caller.Process.Kill()
	caller.Wait()
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(p.Dir, "inserted.txt")); err == nil {
		t.Fatal("create_work outlived the process feeding it and inserted its jobs")
	}
}
