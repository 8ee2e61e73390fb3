package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// orphan starts script detached from the test (its shell exits, so it is
// reparented: no descendant of the test) and returns its pid.
func orphan(t *testing.T, script string) int {
	out, err := exec.Command("sh", "-c", "sh "+script+" >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// The whole-run kill takes the driver's descendants and the processes
// naming the work directory (daemons a killed server left, reparented),
// and no other, not one of a directory whose name begins with it.
func TestRunProcs(t *testing.T) {
	work := t.TempDir()
	s := &soak{o: options{work: work}}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	script := filepath.Join(work, "daemon.sh")
	os.WriteFile(script, []byte("sleep 30\n"), 0o755)
	otherDir := work + "x"
	os.MkdirAll(otherDir, 0o755)
	defer os.RemoveAll(otherDir)
	other := filepath.Join(otherDir, "daemon.sh")
	os.WriteFile(other, []byte("sleep 30\n"), 0o755)
	named, unrelated := orphan(t, script), orphan(t, other)
	got := s.runProcs(os.Getpid())
	if !slices.Contains(got, child.Process.Pid) {
		t.Errorf("the driver's child %d not among %v", child.Process.Pid, got)
	}
	if !slices.Contains(got, named) {
		t.Errorf("the process %d of the work directory not among %v", named, got)
	}
	if slices.Contains(got, unrelated) {
		t.Errorf("the process %d of %s taken for the run in %s", unrelated, otherDir, work)
	}
	if slices.Contains(got, os.Getpid()) {
		t.Error("the driver itself among them (it is killed last)")
	}
}
