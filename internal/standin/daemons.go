package standin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/ctxsleep"
)

// rboinc's daemons are real processes on the stand-in, as bin/start runs
// them on a project (BOINC's own daemons the stand-in plays itself): each
// enabled <daemon> of config.xml whose program is one of rboinc's
// (rboinc-server, rboinc_*) runs from tmp_<host> with the project's bin/
// first in PATH, its output appended to log_<host>/<output>, and is started
// again when it exits, unless the stop_daemons trigger file is there.

// daemonRestart is how long the stand-in waits before starting an exited
// daemon again (bin/start --cron does it every five minutes), and before
// looking again at a daemon another process runs. A variable for the tests.
var daemonRestart = 2 * time.Second

// isRboincDaemon tells whether a daemon is rboinc's.
func isRboincDaemon(d boinc.Daemon) bool {
	prog := d.Program()
	return prog == "rboinc-server" || strings.HasPrefix(prog, "rboinc_")
}

// runDaemons supervises rboinc's daemons until ctx ends, then stops them
// as bin/stop does (SIGHUP, then SIGKILL after a grace period).
func (s *sim) runDaemons(ctx context.Context) {
	p, err := boinc.LoadProject(s.dir)
	if err != nil {
		return // pass() reports config errors
	}
	for _, d := range p.DaemonEntries {
		if d.Disabled || !isRboincDaemon(d) {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.superviseDaemon(ctx, p, d)
		}()
	}
}

func (s *sim) superviseDaemon(ctx context.Context, p *boinc.Project, d boinc.Daemon) {
	host := p.Host
	if host == "" {
		host, _ = os.Hostname()
		host, _, _ = strings.Cut(host, ".")
	}
	log := s.log.With("daemon", d.Cmd)
	lockPath := filepath.Join(p.HostDir("pid", host), d.LockName())
	seenHolder := 0
	for ctx.Err() == nil {
		if _, err := os.Stat(filepath.Join(p.Dir, "stop_daemons")); err == nil {
			if !ctxsleep.Sleep(ctx, daemonRestart) {
				return
			}
			continue
		}
		// As bin/start: a daemon whose lock another process holds runs
		// already (one a killed server started lives on), and is not
		// started again until it ends. Starting it would only have it
		// refuse and exit, every few seconds.
		if pid := lockHolder(lockPath); pid != 0 {
			if pid != seenHolder {
				log.Info("daemon runs already; started again when it ends", "pid", pid, "lock", lockPath)
				seenHolder = pid
			}
			if !ctxsleep.Sleep(ctx, daemonRestart) {
				return
			}
			continue
		}
		seenHolder = 0
		err := s.runDaemon(ctx, p, d, host)
		if ctx.Err() != nil {
			return
		}
		log.Warn("daemon exited; starting it again", "err", err, "in", daemonRestart)
		if !ctxsleep.Sleep(ctx, daemonRestart) {
			return
		}
	}
}

// runDaemon runs one daemon until it exits or ctx ends.
func (s *sim) runDaemon(ctx context.Context, p *boinc.Project, d boinc.Daemon, host string) error {
	tmp := p.HostDir("tmp", host)
	logDir := p.HostDir("log", host)
	for _, dir := range []string{tmp, logDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	out, err := os.OpenFile(filepath.Join(logDir, d.LogName()), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	args := strings.Fields(d.Cmd)
	bin := filepath.Join(p.Dir, "bin")
	prog := args[0]
	if !strings.ContainsRune(prog, '/') {
		if _, err := os.Stat(filepath.Join(bin, prog)); err == nil {
			prog = filepath.Join(bin, prog)
		} else if prog, err = exec.LookPath(prog); err != nil {
			return err
		}
	}
	cmd := exec.Command(prog, args[1:]...)
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	cmd.Process.Signal(syscall.SIGHUP)
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		return errors.Join(errors.New("daemon did not stop within 10 s of SIGHUP; killed"), <-done)
	}
}

// lockHolder is the process holding a POSIX write lock on path (bin/start's
// test of a running daemon), or 0 when none does or path cannot be read.
// A lock of this process does not count: POSIX locks do not conflict
// within a process.
func lockHolder(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	q := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &q); err != nil || q.Type == syscall.F_UNLCK {
		return 0
	}
	if q.Pid <= 0 {
		return -1 // held, holder unknown (another host's lock over NFS)
	}
	return int(q.Pid)
}
