//go:build unix

package boinc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCreateWorkCancelEndsItsChildren: a batch create_work whose context
// ends is killed with whatever it started. A project's wrapper that runs
// the real create_work as a child would otherwise outlive the kill, and
// CreateWork would wait for the child to close the output it holds.
func TestCreateWorkCancelEndsItsChildren(t *testing.T) {
	p := fakeCreateWork(t)
	dir := p.Dir
	script := "#!/bin/sh\ncat > got.txt\nsleep 60 &\necho $! > child.pid\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "create_work"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- CreateWork(ctx, p, WorkParams{App: "a"}, []Job{job("w1")}) }()
	pidFile := filepath.Join(dir, "child.pid")
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake create_work never started its child")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("CreateWork succeeded after its context ended")
		}
	case <-time.After(10 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("CreateWork still waits 10 s after its context ended: create_work's child holds its output")
	}
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("create_work's child outlived the cancelled run")
		}
	}
}
