//go:build linux

package boinc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitRead waits until create_work has read the job w1.
func waitRead(t *testing.T, p *Project) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(p.Dir, "got.txt")); strings.Contains(string(b), "--wu_name w1 ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("create_work never read its job")
		}
	}
}

// TestCreateWorkGuardKilledAlone: a guard killed on its own (its copy of
// create_work's input closes) leaves the input open, and the run that
// finishes afterwards kills create_work instead of ending its input: the
// jobs are not created and Finish says why.
func TestCreateWorkGuardKilledAlone(t *testing.T) {
	p := fakeCreateWork(t)
	os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte("#!/bin/sh\nexec 3<&0\n( cat <&3 > got.txt; echo > inserted.txt ) &\nwait\n"), 0o755)
	r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(job("w1")); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	waitRead(t, p)
	pgid := r.cmd.Process.Pid
	r.guard.cmd.Process.Kill()
	guard := strconv.Itoa(r.guard.cmd.Process.Pid) + " "
	for deadline := time.Now().Add(10 * time.Second); slices.ContainsFunc(liveGroup(t, pgid), func(s string) bool { return strings.HasPrefix(s, guard) }); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed guard is still alive")
		}
	}
	time.Sleep(100 * time.Millisecond) // create_work would have seen its input end by now
	if _, err := os.Stat(filepath.Join(p.Dir, "inserted.txt")); err == nil {
		t.Fatal("create_work inserted its jobs when its guard was killed")
	}
	err = r.Finish()
	if err == nil || !strings.Contains(err.Error(), "guard process is gone") {
		t.Fatalf("Finish after the guard died: %v", err)
	}
	if live := liveGroup(t, pgid); len(live) != 0 {
		t.Fatalf("create_work's group outlived the failed Finish: %q", live)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "inserted.txt")); err == nil {
		t.Fatal("create_work inserted its jobs after its guard was killed")
	}
}

// TestCreateWorkRunLeavesNoGuard: however a run ends, its guard is gone
// (and reaped) when Finish or Abort returns.
func TestCreateWorkRunLeavesNoGuard(t *testing.T) {
	p := fakeCreateWork(t)
	for _, end := range []string{"finish", "abort", "refused"} {
		r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
		if err != nil {
			t.Fatal(err)
		}
		name := "w1"
		if end == "refused" {
			name = "bad"
		}
		if err := r.Add(job(name)); err != nil {
			t.Fatal(err)
		}
		switch end {
		case "abort":
			r.Abort()
		default:
			if err := r.Finish(); (err != nil) != (end == "refused") {
				t.Fatalf("%s: Finish: %v", end, err)
			}
		}
		if err := syscall.Kill(r.guard.cmd.Process.Pid, 0); err == nil {
			t.Fatalf("%s: the guard (or its zombie) is still there", end)
		}
		if r.guard.cmd.ProcessState == nil {
			t.Fatalf("%s: the guard was not waited for", end)
		}
	}
}
