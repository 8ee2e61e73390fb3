package standin

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
)

// holdLockMain is the test binary as another process holding a daemon's
// lock (bin/start's mark of a running daemon) until its stdin closes.
func holdLockMain(path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		os.Exit(1)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if syscall.FcntlFlock(f.Fd(), syscall.F_SETLKW, &lk) != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
}

// A daemon still running from before (a killed server's child lives on,
// holding its lock) is not started again until it ends, as bin/start
// leaves a running daemon alone; the stand-in started a copy every 2 s,
// which refused and exited, for as long as the first lived.
func TestDaemonRunningAlreadyNotStarted(t *testing.T) {
	t.Parallel()
	old := daemonRestart
	daemonRestart = 50 * time.Millisecond
	t.Cleanup(func() { daemonRestart = old })

	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "rboinc_fake"), []byte("#!/bin/sh\necho run >> "+started+"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &boinc.Project{Dir: dir, Host: "testhost"}
	d := boinc.Daemon{Cmd: "rboinc_fake"}
	lockPath := filepath.Join(p.HostDir("pid", "testhost"), d.LockName())
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		t.Fatal(err)
	}

	holder := exec.Command(os.Args[0], "standin", "holdlock", lockPath)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); holder.Process.Kill(); holder.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock holder said %q", line)
	}

	var logBuf strings.Builder
	s := &sim{dir: dir, log: slog.New(slog.NewTextHandler(&logBuf, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.superviseDaemon(ctx, p, d) }()
	t.Cleanup(func() { cancel(); <-done })

	time.Sleep(20 * daemonRestart)
	if _, err := os.Stat(started); err == nil {
		t.Fatal("the daemon was started while another process held its lock")
	}
	stdin.Close() // the earlier daemon ends
	holder.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon was not started after the earlier one ended")
		}
		time.Sleep(daemonRestart)
	}
	cancel()
	<-done
	if n := strings.Count(logBuf.String(), "daemon runs already"); n != 1 {
		t.Errorf("the running daemon was logged %d times, want once:\n%s", n, logBuf.String())
	}
}
