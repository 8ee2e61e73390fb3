package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/internal/testbin"
)

// newRoot makes a server root on the embedded stand-in, with the built
// rboinc-server, and returns it and the program.
func newRoot(t *testing.T) (root, exe string) {
	t.Helper()
	bin, err := standinserver.Built()
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(bin, "rboinc-server")
	root = t.TempDir()
	testbin.Preinstall(root, exe)
	if _, err := setup.Init(context.Background(), setup.Options{Root: root, Exe: exe, URLBase: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	return root, exe
}

// proc is a daemon started as a real process.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
}

func start(t *testing.T, exe string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(exe, args...), out: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to exit, within d.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		return err
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v; its output:\n%s", strings.Join(p.cmd.Args, " "), d, p.out.String())
		return nil
	}
}

// pidFiles are the notifier's files in the stand-in's pid_<host>/.
func pidFiles(root string) (pid, lock string) {
	s := daemon.NotifierStart
	s.Project = filepath.Join(root, "boinc")
	return s.Files()
}

// waitPid waits until the pid file names want.
func waitPid(t *testing.T, path string, want int) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(want) {
			return
		}
	}
	b, err := os.ReadFile(path)
	t.Fatalf("pid file %s holds %q (%v), want %d", path, b, err, want)
}

// lockHolder is the process holding a POSIX lock on path, or 0.
func lockHolder(t *testing.T, path string) int {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		t.Fatal(err)
	}
	if lk.Type == syscall.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}

// A daemon writes its pid file and holds its lock as bin/start's would;
// a second copy refuses to start, saying which process runs; each of
// BOINC's stop signals (and ^C, and SIGTERM) stops it cleanly, its pid
// file gone and its lock free.
func TestDaemonPidLockSecondCopyAndSignals(t *testing.T) {
	root, exe := newRoot(t)
	pidPath, lockPath := pidFiles(root)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT} {
		first := start(t, exe, "notifier", "--root", root)
		waitPid(t, pidPath, first.cmd.Process.Pid)
		if h := lockHolder(t, lockPath); h != first.cmd.Process.Pid {
			t.Fatalf("%s is held by process %d, want the daemon's %d", lockPath, h, first.cmd.Process.Pid)
		}
		second := start(t, exe, "notifier", "--root", root)
		if err := second.wait(t, 30*time.Second); err == nil {
			t.Fatalf("a second notifier started beside the first:\n%s", second.out.String())
		}
		if s := second.out.String(); !strings.Contains(s, "rboinc_notifier: already running (process "+strconv.Itoa(first.cmd.Process.Pid)+" holds "+lockPath+")") {
			t.Fatalf("the second copy said:\n%s", s)
		}
		first.cmd.Process.Signal(sig)
		if err := first.wait(t, 15*time.Second); err != nil {
			t.Fatalf("after %v the daemon exited with %v:\n%s", sig, err, first.out.String())
		}
		if !strings.Contains(first.out.String(), "signal="+sig.String()) && !strings.Contains(first.out.String(), `signal="`+sig.String()+`"`) {
			t.Errorf("the daemon did not say it quit for %v:\n%s", sig, first.out.String())
		}
		if _, err := os.Stat(pidPath); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("pid file left after %v: %v", sig, err)
		}
		if h := lockHolder(t, lockPath); h != 0 {
			t.Fatalf("lock still held by %d after %v", h, sig)
		}
	}
}

// bin/stop leaves the stop_daemons trigger file: a running daemon quits
// within seconds, and none starts while it is there.
func TestDaemonObeysStopDaemons(t *testing.T) {
	root, exe := newRoot(t)
	pidPath, _ := pidFiles(root)
	p := start(t, exe, "creator", "--root", root)
	cp := daemon.CreatorStart
	cp.Project = filepath.Join(root, "boinc")
	creatorPid, _ := cp.Files()
	waitPid(t, creatorPid, p.cmd.Process.Pid)
	trigger := filepath.Join(root, "boinc", daemon.StopFile)
	if err := os.WriteFile(trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 15*time.Second); err != nil {
		t.Fatalf("the creator exited with %v:\n%s", err, p.out.String())
	}
	if !strings.Contains(p.out.String(), "quitting because BOINC's trigger file is present") {
		t.Errorf("the creator did not say why it quit:\n%s", p.out.String())
	}
	n := start(t, exe, "notifier", "--root", root)
	if err := n.wait(t, 30*time.Second); err != nil {
		t.Fatalf("a daemon refused by the trigger file exits 0, got %v", err)
	}
	if !strings.Contains(n.out.String(), "stop_daemons trigger file is present") {
		t.Errorf("the notifier did not say why it did not start:\n%s", n.out.String())
	}
	if _, err := os.Stat(pidPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a daemon that did not start wrote its pid file: %v", err)
	}
}

// --one_pass does one pass and exits, for each daemon; -d sets the level
// as BOINC's daemons read it (2: warnings and errors only; 4: debug).
func TestDaemonOnePassAndDebugLevel(t *testing.T) {
	root, exe := newRoot(t)
	for _, name := range []string{"creator", "notifier", "assimilator"} {
		p := start(t, exe, name, "--root", root, "--one_pass", "-d", "4")
		if err := p.wait(t, 60*time.Second); err != nil {
			t.Fatalf("%s --one_pass: %v\n%s", name, err, p.out.String())
		}
	}
	// Level 3 says why the daemon quits (a normal message), level 2 not.
	for d, want := range map[string]bool{"2": false, "3": true} {
		p := start(t, exe, "notifier", "--root", root, "-d", d)
		pidPath, _ := pidFiles(root)
		waitPid(t, pidPath, p.cmd.Process.Pid)
		p.cmd.Process.Signal(syscall.SIGHUP)
		if err := p.wait(t, 15*time.Second); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(p.out.String(), "level=INFO msg=quitting"); got != want {
			t.Errorf("-d %s: normal messages shown %v, want %v:\n%s", d, got, want, p.out.String())
		}
	}
	// --debug_level, BOINC's long form, is the same flag.
	p := start(t, exe, "creator", "--root", root, "--one_pass", "--debug_level", "4")
	if err := p.wait(t, 60*time.Second); err != nil {
		t.Fatalf("--debug_level: %v\n%s", err, p.out.String())
	}
}

// syncBuffer is a bytes.Buffer the test reads while the process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
