package mariadbtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrNotInstalled is returned (wrapped) by [Start] when no MariaDB server
// binary or no mariadb-install-db is found.
var ErrNotInstalled = errors.New("mariadbd not installed")

const (
	startTimeout = 60 * time.Second // for the server to answer once started
	stopTimeout  = 30 * time.Second // from SIGTERM to SIGKILL
	portAttempts = 3                // launches tried when the free port was taken meanwhile

	// maxSocketPath keeps the socket's path within sun_path (108 bytes on
	// Linux, 104 on the BSDs), with its terminating NUL.
	maxSocketPath = 100

	// installedMarker is written into the data directory once
	// mariadb-install-db has succeeded; a data directory without it is
	// from an interrupted install and is made again.
	installedMarker = "mariadbtest-installed"
)

// searchDirs are looked in, after PATH, for the server's binaries (sbin is
// often not in a normal user's PATH).
var searchDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/bin"}

// Server is a private MariaDB server: temporary datadir, its own unix socket
// and a loopback TCP port, no system service.
type Server struct {
	Dir    string // the server's directory: data/, tmp/, mysqld.sock, mysqld.pid, mysqld.log
	Socket string // the unix socket, Dir/mysqld.sock
	Port   int    // the TCP port, on 127.0.0.1 only

	cmd     *exec.Cmd
	done    chan struct{} // closed once the server process has exited
	waitErr error         // the process's exit, set before done is closed
	root    *sql.DB       // root over the socket, for NewDatabase and DropDatabase

	mu      sync.Mutex
	stopped bool
	stopErr error
	users   map[string]string // database name → the user NewDatabase made for it

	bufferPool string // --innodb-buffer-pool-size, if not tuning's
}

// Option changes how Start runs the server.
type Option func(*Server)

// BufferPool sets InnoDB's buffer pool (mariadbd's
// --innodb-buffer-pool-size: bytes, or with a K, M or G suffix), for a
// server holding more than a test's few megabytes. "" keeps the default.
func BufferPool(size string) Option {
	return func(s *Server) { s.bufferPool = size }
}

// Start makes a data directory in dir/data with mariadb-install-db (unless
// one a previous Start made is there already, in which case its databases
// are kept), then starts mariadbd on it and waits until it answers as root
// over its socket. The server reads no option files, listens on
// dir/mysqld.sock and on a free port of 127.0.0.1, and keeps its pid file
// and its log (mysqld.log) in dir.
//
// A pid file and socket left by a killed server are removed; a server still
// running in dir is an error. ctx bounds the install and the wait, not the
// server's life: that lasts until [Server.Stop], or until the test binary
// exits (on Linux the server is killed with its parent).
//
// A database much larger than the server's 64 MiB buffer pool is read
// from disk at almost every query: [BufferPool] sizes it as a project
// would.
func Start(ctx context.Context, dir string, opts ...Option) (*Server, error) {
	mariadbd := findBinary("mariadbd", "mysqld")
	installDB := findBinary("mariadb-install-db", "mysql_install_db")
	if mariadbd == "" || installDB == "" {
		return nil, fmt.Errorf("%w: need mariadbd (or mysqld) and mariadb-install-db (or mysql_install_db) in PATH or %s",
			ErrNotInstalled, strings.Join(searchDirs, ", "))
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{
		Dir:    dir,
		Socket: filepath.Join(dir, "mysqld.sock"),
		users:  make(map[string]string),
	}
	for _, o := range opts {
		o(s)
	}
	if len(s.Socket) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is longer than %d bytes: use a shorter directory", s.Socket, maxSocketPath)
	}
	datadir := filepath.Join(dir, "data")
	if err := removeStale(dir, datadir); err != nil {
		return nil, err
	}
	if err := install(ctx, installDB, mariadbd, dir, datadir); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		err := s.launch(ctx, mariadbd, datadir)
		if errors.Is(err, errPortTaken) && attempt < portAttempts {
			continue
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// findBinary returns the first of names found in PATH, else in searchDirs,
// or "" if none is.
func findBinary(names ...string) string {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	for _, dir := range searchDirs {
		for _, name := range names {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// userArgs are the options that let the server run as the current user:
// mariadbd refuses to run as root unless told to.
func userArgs() []string {
	if os.Geteuid() == 0 {
		return []string{"--user=root"}
	}
	return nil
}

// tuning are the server options that make it start fast and stay small, for
// mariadb-install-db's bootstrap as well as for the server. Committed data
// survives the server being killed, not the machine losing power.
func tuning() []string {
	return []string{
		"--skip-log-bin",
		"--skip-name-resolve",
		"--innodb-buffer-pool-size=64M",
		"--innodb-log-file-size=8M", // the default is 96M, written in full at install
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0",
		"--innodb-use-native-aio=0", // containers often refuse io_uring or cap locked memory
		"--innodb-buffer-pool-load-at-startup=0",
		"--innodb-buffer-pool-dump-at-shutdown=0",
	}
}

// removeStale removes the pid file and socket a killed server left in dir,
// after checking that no server is still running there.
func removeStale(dir, datadir string) error {
	pidFile := filepath.Join(dir, "mysqld.pid")
	if b, err := os.ReadFile(pidFile); err == nil {
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && serverRunning(pid, datadir) {
			return fmt.Errorf("a server (pid %d) is still running in %s", pid, dir)
		}
	}
	for _, name := range []string{"mysqld.pid", "mysqld.sock", "mysqld.sock.lock"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// install fills datadir with a fresh install, unless a previous install
// completed there: a copy of the one mariadb-install-db made for these
// programs and options (fromTemplate), running it first if there is none
// yet, its output to dir/install.log.
func install(ctx context.Context, installDB, mariadbd, dir, datadir string) error {
	if _, err := os.Stat(filepath.Join(datadir, installedMarker)); err == nil {
		return nil
	}
	// Every fresh data directory is the same install: made once, copied.
	return fromTemplate(ctx, installDB, mariadbd, append(userArgs(), tuning()...), dir, datadir,
		func(ctx context.Context, dir, datadir string) error {
			// A bootstrap can fail on a loaded machine (many test binaries
			// each installing a server at once); a second try in a fresh
			// directory is cheap, and a lasting failure still shows.
			var err error
			for try := 0; try < 3; try++ {
				if err = installOnce(ctx, installDB, dir, datadir); err == nil || ctx.Err() != nil {
					return err
				}
			}
			return err
		})
}

func installOnce(ctx context.Context, installDB, dir, datadir string) error {
	if err := os.RemoveAll(datadir); err != nil {
		return err
	}
	args := []string{"--no-defaults", "--datadir=" + datadir}
	// Older versions lack these options; the defaults then suit us anyway
	// (root without a password; a test database nobody uses).
	help, _ := exec.CommandContext(ctx, installDB, "--help").CombinedOutput()
	if bytes.Contains(help, []byte("--auth-root-authentication-method")) {
		// root logs in with no password, whichever user runs the tests
		// (the default, unix_socket, would admit only the OS user root).
		args = append(args, "--auth-root-authentication-method=normal")
	}
	if bytes.Contains(help, []byte("--skip-test-db")) {
		args = append(args, "--skip-test-db")
	}
	// The bootstrap, a server too, clears its tmpdir as a server's start
	// does (see launch): one of its own.
	tmpdir := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmpdir, 0o700); err != nil {
		return err
	}
	args = append(args, "--tmpdir="+tmpdir)
	args = append(args, userArgs()...)
	args = append(args, tuning()...)

	logPath := filepath.Join(dir, "install.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, installDB, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = dir
	// It is a script running mariadbd --bootstrap: when ctx ends, kill both.
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	err = cmd.Run()
	logFile.Close()
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		return fmt.Errorf("%s into %s: %w", filepath.Base(installDB), datadir, ctxErr)
	}
	if err != nil {
		return fmt.Errorf("%s into %s: %v; %s says:\n%s", filepath.Base(installDB), datadir, err, logPath, errorLines(logPath))
	}
	return os.WriteFile(filepath.Join(datadir, installedMarker), nil, 0o644)
}

// errPortTaken is launch's error when another process took the free port
// between freePort and the server's bind.
var errPortTaken = errors.New("port taken")

// launch starts mariadbd on datadir and a free port and waits until it
// answers; on failure the process is gone.
func (s *Server) launch(ctx context.Context, mariadbd, datadir string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(s.Dir, "mysqld.log")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	fi, err := logFile.Stat()
	if err != nil {
		return err
	}
	logStart := fi.Size()

	// A temporary directory of the server's own: a starting server
	// deletes every #sql* file in its tmpdir, which in a shared /tmp were
	// the on-disk temporary tables of every other server running there
	// (the tests' others, restarted ones, a soak's): their statements then
	// failed ("Error on delete of '/tmp/#sql-temptable-...MAI'") or the
	// server crashed.
	tmpdir := filepath.Join(s.Dir, "tmp")
	if err := os.MkdirAll(tmpdir, 0o700); err != nil {
		return err
	}
	args := []string{"--no-defaults"} // must come first
	args = append(args, userArgs()...)
	args = append(args,
		"--tmpdir="+tmpdir,
		"--datadir="+datadir,
		"--socket="+s.Socket,
		"--port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--pid-file="+filepath.Join(s.Dir, "mysqld.pid"),
		"--log-error="+logPath,
	)
	args = append(args, tuning()...)
	if s.bufferPool != "" {
		args = append(args, "--innodb-buffer-pool-size="+s.bufferPool) // the last of an option wins
	}
	cmd := exec.Command(mariadbd, args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile // before --log-error takes over
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", mariadbd, err)
	}
	s.cmd, s.Port = cmd, port
	s.done = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()

	root, err := s.waitReady(ctx)
	if err == nil {
		s.root = root
		return nil
	}
	s.cmd.Process.Kill()
	<-s.done
	if logged := readFrom(logPath, logStart); bytes.Contains(logged, []byte("Address already in use")) {
		return fmt.Errorf("%w: %d", errPortTaken, port)
	}
	return fmt.Errorf("%s in %s: %w; end of %s:\n%s", filepath.Base(mariadbd), s.Dir, err, logPath, tail(logPath, logStart))
}

// waitReady pings the server as root over its socket until it answers, the
// process exits, ctx ends or startTimeout passes.
func (s *Server) waitReady(ctx context.Context) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = s.Socket
	cfg.Timeout = 2 * time.Second
	// Failed attempts are returned as errors; the driver need not also
	// print them.
	cfg.Logger = log.New(io.Discard, "", 0)
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pingCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err := db.PingContext(pingCtx)
		cancel()
		if err == nil {
			return db, nil
		}
		select {
		case <-s.done:
			db.Close()
			return nil, fmt.Errorf("server exited while starting (%v)", s.waitErr)
		case <-ctx.Done():
			db.Close()
			return nil, fmt.Errorf("server not answering yet (%v): %w", err, ctx.Err())
		case <-deadline.C:
			db.Close()
			return nil, fmt.Errorf("server did not answer within %v (%v)", startTimeout, err)
		case <-tick.C:
		}
	}
}

// Stop shuts the server down: SIGTERM, then SIGKILL if it has not exited
// within 30 s. It returns an error if the server had to be killed or had
// exited before Stop. Later calls return the first call's result.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.stopped = true
		s.stopErr = s.stop()
	}
	return s.stopErr
}

func (s *Server) stop() error {
	if s.root != nil {
		s.root.Close()
	}
	select {
	case <-s.done:
		return fmt.Errorf("server in %s had exited before Stop (%v)", s.Dir, s.waitErr)
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		timer := time.NewTimer(stopTimeout)
		defer timer.Stop()
		select {
		case <-s.done:
			if s.waitErr != nil {
				return fmt.Errorf("server in %s: %v after SIGTERM", s.Dir, s.waitErr)
			}
			return nil
		case <-timer.C:
		}
	}
	s.cmd.Process.Kill()
	<-s.done
	os.Remove(s.Socket) // a killed server leaves it
	return fmt.Errorf("server in %s did not stop within %v of SIGTERM and was killed; end of its log:\n%s",
		s.Dir, stopTimeout, tail(filepath.Join(s.Dir, "mysqld.log"), 0))
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// readFrom returns the file's content from offset on, or nil.
func readFrom(path string, offset int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil
	}
	b, _ := io.ReadAll(f)
	return b
}

// tail returns the last lines of the file from offset on, for error
// messages.
func tail(path string, offset int64) string {
	const maxLines, maxBytes = 25, 4096
	b := readFrom(path, offset)
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return strings.Join(lines, "\n")
}

// errorLines are the lines of a log that report errors, or its end when
// none does (mariadb-install-db ends every failure with the same advice).
func errorLines(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "ERROR") || strings.Contains(l, "rror:") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return tail(path, 0)
	}
	return strings.Join(out, "\n")
}

// Kill kills the server with SIGKILL, as a crash or an OOM kill would, and
// waits until it has exited; its socket and pid file stay, as a crash
// leaves them. [Start] on the same directory starts a server on its data
// again (InnoDB recovers what was committed), at the same socket.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("server in %s was stopped already", s.Dir)
	}
	s.stopped = true
	s.stopErr = fmt.Errorf("server in %s was killed", s.Dir)
	if s.root != nil {
		s.root.Close()
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("killing the server in %s: %w", s.Dir, err)
	}
	<-s.done
	return nil
}
