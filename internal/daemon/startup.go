package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/atomicfile"
)

// BOINC's daemons share one start-up (sched_util_basic.cpp, bin/start):
// bin/start takes a POSIX lock on pid_<host>/<name>.lock, writes the pid
// into pid_<host>/<name>.pid and runs the daemon; bin/stop sends SIGHUP to
// the pids and leaves the stop_daemons trigger file, which the daemons obey
// (checked every second) until bin/start removes it. Begin does the same
// for rboinc's daemons, whoever starts them: a daemon started by hand gets
// its pid and lock files too, so that bin/stop stops it and a second copy
// refuses to start.

// StopFile is BOINC's trigger file in the project directory.
const StopFile = "stop_daemons"

// ErrStopFile is Begin's answer while the stop_daemons trigger file is
// present: the daemon does not start (and the command exits 0, as BOINC's).
var ErrStopFile = errors.New("BOINC's stop_daemons trigger file is present")

// ErrRunning is Begin's answer when another copy of the daemon runs.
var ErrRunning = errors.New("already running")

// Start names a daemon and the BOINC project it belongs to.
type Start struct {
	Name    string // as in config.xml: rboinc_creator, rboinc_notifier, ...
	Project string // the BOINC project directory
	// LockFile and PidFile are the names bin/start gives the daemon's
	// files in pid_<host>/ (default Name+".lock", Name+".pid").
	LockFile, PidFile string
	Log               *slog.Logger
}

// Names of rboinc's daemons, and their files in pid_<host>/ as bin/start
// derives them from the <daemon> lines `rboinc-server init` prints
// (<lock_file>, else <output>.lock, else <program>.lock).
var (
	CreatorStart     = Start{Name: "rboinc_creator"}
	NotifierStart    = Start{Name: "rboinc_notifier"}
	AssimilatorStart = Start{Name: "rboinc_assimilator", LockFile: "rboinc_assimilator.log.lock"}
)

// stopLook is how often a running daemon looks for the trigger file.
var stopLook = time.Second // a variable for the tests

// Host is the short host name, as bin/start names pid_<host>/.
func Host() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}

// Files are the daemon's pid and lock files.
func (s Start) Files() (pid, lock string) {
	dir := filepath.Join(s.Project, "pid_"+Host())
	pid, lock = s.PidFile, s.LockFile
	if pid == "" {
		pid = s.Name + ".pid"
	}
	if lock == "" {
		lock = s.Name + ".lock"
	}
	return filepath.Join(dir, pid), filepath.Join(dir, lock)
}

// Begin starts a daemon as BOINC's start: it refuses while the stop_daemons
// trigger file is present (ErrStopFile) or another copy runs (ErrRunning),
// else takes the lock, writes the pid file and returns a context that ends
// at SIGHUP, SIGTERM or SIGINT or when the trigger file appears. end lets
// go of the lock and removes the pid file.
func Begin(ctx context.Context, s Start) (_ context.Context, end func(), err error) {
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	if stopFilePresent(s.Project) {
		return nil, nil, fmt.Errorf("%s not starting: %w (%s; bin/start removes it)", s.Name, ErrStopFile, filepath.Join(s.Project, StopFile))
	}
	pidPath, lockPath := s.Files()
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		return nil, nil, fmt.Errorf("making BOINC's pid directory: %w", err)
	}
	lock, err := lockDaemon(lockPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	// Caught before the pid file tells bin/stop whom to signal.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	if err := atomicfile.Write(pidPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		signal.Stop(sigs)
		lock.Close()
		return nil, nil, fmt.Errorf("%s: writing its pid file: %w", s.Name, err)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(stopLook)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				// The command's own context may end on the same signal
				// first, a moment before it reaches sigs: say so all the
				// same. Not when the daemon's own end cancelled it.
				grace := time.Duration(0)
				if parent.Err() != nil {
					grace = 200 * time.Millisecond
				}
				wait := time.NewTimer(grace)
				select {
				case sig := <-sigs:
					log.Info("quitting", "daemon", s.Name, "signal", sig.String())
				case <-wait.C:
				}
				wait.Stop()
				return
			case sig := <-sigs:
				log.Info("quitting", "daemon", s.Name, "signal", sig.String())
				cancel()
				return
			case <-t.C:
				if stopFilePresent(s.Project) {
					log.Info("quitting because BOINC's trigger file is present", "daemon", s.Name, "file", filepath.Join(s.Project, StopFile))
					cancel()
					return
				}
			}
		}
	}()
	return ctx, func() {
		cancel()
		<-watched
		signal.Stop(sigs)
		// bin/stop removes the pid files it signals; a pid file that
		// names another process is not this daemon's any more.
		if b, err := os.ReadFile(pidPath); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
			os.Remove(pidPath)
		}
		lock.Close()
	}, nil
}

func stopFilePresent(project string) bool {
	_, err := os.Stat(filepath.Join(project, StopFile))
	return err == nil
}

// lockDaemon takes the POSIX lock bin/start takes (Python's lockf). When
// bin/start started this process it holds the lock already, and taking it
// again succeeds: POSIX locks belong to the process. A symlink there is
// not followed (O_NOFOLLOW): whoever may write in pid_<host>/ must not make
// the daemon create or lock a file of their choosing. Nobody else may open
// the file (0600, also when bin/start made it): a read lock, which any
// reader may take, would keep the daemon from starting.
func lockDaemon(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("its lock file %s is a symbolic link; remove it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening its lock file: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(0o600) // not ours to change when another user made it: then as it is
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	err = syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
	if err == nil {
		return f, nil
	}
	defer f.Close()
	if !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EACCES) {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	holder := "another process"
	q := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &q) == nil && q.Type != syscall.F_UNLCK && q.Pid > 0 {
		holder = "process " + strconv.Itoa(int(q.Pid))
	}
	return nil, fmt.Errorf("%w (%s holds %s): a second copy does not start; stop the first (bin/stop, or kill that process) to start another", ErrRunning, holder, path)
}
