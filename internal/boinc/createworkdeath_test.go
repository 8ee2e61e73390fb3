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
// create_work takes create_work with it, instead of leaving it to run on.
// (What create_work read before its input ended, whole job lines only (see
// TestCreateWorkKilledFeederCutsNoLine), may still be inserted:
// the kernel closes a dead process's pipes before the parent-death signal
// comes. The engine hands create_work only jobs of steps already recorded,
// see engine's recordAndCreate, so such work units have their steps.)
func TestCreateWorkDiesWithItsCaller(t *testing.T) {
	p := fakeCreateWork(t)
	// This create_work never ends by itself once its input has ended.
	script := "#!/bin/sh\ncat > got.txt\nwhile :; do sleep 1; done\n"
	if err := os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
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
	// create_work (and the one-second sleeps of its loop) work in the
	// project directory: none may be left there.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := processesIn(p.Dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create_work outlived the process feeding it: pids %v still run in %s", left, p.Dir)
		}
	}
}

// processesIn lists the processes whose working directory is dir.
func processesIn(dir string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
