package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestMain(m *testing.M) { Main(m) }

// requireInstalled skips the test when no server is installed, as Shared
// does, for the tests that start servers of their own.
// Those tests run in parallel: a server's start is mostly waiting.
func requireInstalled(t *testing.T) {
	t.Helper()
	t.Parallel()
	if findBinary("mariadbd", "mysqld") == "" || findBinary("mariadb-install-db", "mysql_install_db") == "" {
		if os.Getenv(NeedEnv) == "1" {
			t.Fatal("mariadbd not installed")
		}
		t.Skip("mariadbd not installed")
	}
}

// start starts a server of the test's own in dir, stopped at cleanup.
func start(t *testing.T, dir string) *Server {
	t.Helper()
	began := time.Now()
	s, err := Start(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server in %s started in %v", dir, time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { s.Stop() })
	return s
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func queryString(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s string
	if err := db.QueryRowContext(t.Context(), q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// mysqlErrno returns the server's error number in err, or 0.
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestSharedDatabases(t *testing.T) {
	s := Shared(t)
	dsnA, dsnB := NewDB(t), NewDB(t)
	cfgA, err := mysql.ParseDSN(dsnA)
	if err != nil {
		t.Fatal(err)
	}
	cfgB, err := mysql.ParseDSN(dsnB)
	if err != nil {
		t.Fatal(err)
	}
	wantPrefix := "@unix(" + s.Socket + ")/db_"
	for _, dsn := range []string{dsnA, dsnB} {
		if !strings.Contains(dsn, wantPrefix) || !strings.HasPrefix(dsn, "db_") {
			t.Errorf("DSN %q: want USER:PASS%s...", dsn, wantPrefix)
		}
	}
	if cfgA.DBName == cfgB.DBName || cfgA.User == cfgB.User || cfgA.Passwd == cfgB.Passwd {
		t.Errorf("databases share a name, user or password: %q, %q", dsnA, dsnB)
	}

	for _, dsn := range []string{dsnA, dsnB} {
		unix, tcp := open(t, dsn), open(t, s.TCPDSN(dsn))
		mustExec(t, unix, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB")
		mustExec(t, unix, "INSERT INTO t VALUES (1, ?)", "by unix")
		mustExec(t, tcp, "INSERT INTO t VALUES (2, ?)", "by tcp")
		if got := queryString(t, tcp, "SELECT v FROM t WHERE id = 1"); got != "by unix" {
			t.Errorf("over tcp: got %q, want %q", got, "by unix")
		}
		if got := queryString(t, unix, "SELECT v FROM t WHERE id = 2"); got != "by tcp" {
			t.Errorf("over unix: got %q, want %q", got, "by tcp")
		}
		// The DSNs do reach the server over the transport they name.
		if got := queryString(t, tcp, "SELECT USER()"); !strings.HasSuffix(got, "@127.0.0.1") {
			t.Errorf("over tcp, USER() = %q, want ...@127.0.0.1", got)
		}
		if got := queryString(t, unix, "SELECT USER()"); !strings.HasSuffix(got, "@localhost") {
			t.Errorf("over unix, USER() = %q, want ...@localhost", got)
		}
	}

	// A's user can neither read B's table nor connect to B.
	a := open(t, dsnA)
	var n int
	err = a.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM `"+cfgB.DBName+"`.t").Scan(&n)
	if code := mysqlErrno(err); code != 1142 { // ER_TABLEACCESS_DENIED_ERROR
		t.Errorf("user A reading B's table: err %v, want error 1142 (denied)", err)
	}
	aOnB := cfgB.Clone()
	aOnB.User, aOnB.Passwd = cfgA.User, cfgA.Passwd
	for _, dsn := range []string{aOnB.FormatDSN(), s.TCPDSN(aOnB.FormatDSN())} {
		err := open(t, dsn).PingContext(t.Context())
		if code := mysqlErrno(err); code != 1044 { // ER_DBACCESS_DENIED_ERROR
			t.Errorf("user A connecting to B (%s): err %v, want error 1044 (denied)", dsn, err)
		}
	}
	rows, err := a.QueryContext(t.Context(), "SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name == cfgB.DBName || name == "mysql" {
			t.Errorf("user A sees database %s", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestDropDatabase(t *testing.T) {
	s := Shared(t)
	dsn, err := s.NewDatabase(t.Context(), "drop_me")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, open(t, dsn), "CREATE TABLE t (id INT)")
	if err := s.DropDatabase(t.Context(), "drop_me"); err != nil {
		t.Fatal(err)
	}
	// Its user is gone with it.
	err = open(t, dsn).PingContext(t.Context())
	if code := mysqlErrno(err); code != 1045 { // ER_ACCESS_DENIED_ERROR
		t.Errorf("after DropDatabase, connecting: err %v, want error 1045", err)
	}
	// The name can be used again.
	if _, err := s.NewDatabase(t.Context(), "drop_me"); err != nil {
		t.Fatal(err)
	}
	if err := s.DropDatabase(t.Context(), "drop_me"); err != nil {
		t.Fatal(err)
	}
}

func TestNewDatabaseErrors(t *testing.T) {
	s := Shared(t)
	for _, name := range []string{"", "a-b", "a`b", "x'; DROP DATABASE mysql; --", strings.Repeat("a", 65)} {
		if _, err := s.NewDatabase(t.Context(), name); err == nil {
			t.Errorf("NewDatabase(%q): no error", name)
		}
	}
	dsn := NewDB(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewDatabase(t.Context(), cfg.DBName); mysqlErrno(err) != 1007 { // ER_DB_CREATE_EXISTS
		t.Errorf("NewDatabase on an existing name: err %v, want error 1007", err)
	}
	// The failed call left the existing database alone.
	mustExec(t, open(t, dsn), "CREATE TABLE t (id INT)")
}

func TestTCPDSN(t *testing.T) {
	s := &Server{Socket: "/tmp/x/mysqld.sock", Port: 4242}
	got := s.TCPDSN("u:p@unix(/tmp/x/mysqld.sock)/db_1_ab")
	if want := "u:p@tcp(127.0.0.1:4242)/db_1_ab"; got != want {
		t.Errorf("TCPDSN = %q, want %q", got, want)
	}
}

func TestStopRemovesSocket(t *testing.T) {
	requireInstalled(t)
	s := start(t, t.TempDir())
	dsn, err := s.NewDatabase(t.Context(), "before_stop")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{s.Socket, filepath.Join(s.Dir, "mysqld.pid")} {
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Stop, %s: %v, want it gone", name, err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := open(t, s.TCPDSN(dsn)).PingContext(t.Context()); err == nil {
		t.Error("after Stop, the TCP port still answers")
	}
}

// TestStartAfterKill starts a server where the previous one was killed with
// SIGKILL (leaving its socket and pid file): the new one starts, and has
// the killed one's committed data.
func TestStartAfterKill(t *testing.T) {
	requireInstalled(t)
	dir := t.TempDir()
	s := start(t, dir)
	dsn, err := s.NewDatabase(t.Context(), "survivor")
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, dsn)
	mustExec(t, db, "CREATE TABLE t (v VARCHAR(20))")
	mustExec(t, db, "INSERT INTO t VALUES ('committed')")
	db.Close()

	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	for _, name := range []string{s.Socket, filepath.Join(dir, "mysqld.pid")} {
		if _, err := os.Stat(name); err != nil {
			t.Logf("the killed server left no %s (%v)", name, err)
		}
	}

	s2 := start(t, dir)
	if s2.Port == s.Port {
		t.Logf("same port %d again", s.Port) // allowed: it is free again
	}
	// The user made before the kill still logs in, over both transports.
	for _, dsn := range []string{dsn, s2.TCPDSN(dsn)} {
		if got := queryString(t, open(t, dsn), "SELECT v FROM t"); got != "committed" {
			t.Errorf("after restart, %s: got %q, want %q", dsn, got, "committed")
		}
	}
	if err := s.Stop(); err == nil {
		t.Error("Stop of the killed server: no error, want one saying it had exited")
	}
}

func TestStartWhileRunning(t *testing.T) {
	requireInstalled(t)
	dir := t.TempDir()
	s := start(t, dir)
	s2, err := Start(t.Context(), dir)
	if err == nil {
		s2.Stop()
		t.Fatal("second Start in the same directory: no error")
	}
	if want := "pid " + strconv.Itoa(s.cmd.Process.Pid) + ") is still running"; !strings.Contains(err.Error(), want) {
		t.Errorf("second Start: %v, want it to say %q", err, want)
	}
	// The first server is untouched.
	if err := s.root.PingContext(t.Context()); err != nil {
		t.Errorf("first server: %v", err)
	}
}

// TestStartAfterInterruptedInstall starts on a data directory left by an
// install that did not finish: it is made again.
func TestStartAfterInterruptedInstall(t *testing.T) {
	requireInstalled(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data", "mysql"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "ibdata1"), []byte("half written"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, dir)
	if _, err := s.NewDatabase(t.Context(), "fresh"); err != nil {
		t.Fatal(err)
	}
}

func TestStartFailureShowsLog(t *testing.T) {
	requireInstalled(t)
	dir := t.TempDir()
	s := start(t, dir)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	// Break the data directory: the server cannot start, and says why.
	if err := os.WriteFile(filepath.Join(dir, "data", "ibdata1"), []byte("not innodb"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s2, err := Start(ctx, dir)
	if err == nil {
		s2.Stop()
		t.Fatal("Start on a broken data directory: no error")
	}
	if !strings.Contains(err.Error(), "mysqld.log") || !strings.Contains(err.Error(), "[ERROR]") {
		t.Errorf("Start's error does not show the log's end:\n%v", err)
	}
}

// TestStartCanceled cancels Start during the install: it returns the
// context's error and leaves no process behind.
func TestStartCanceled(t *testing.T) {
	requireInstalled(t)
	if runtime.GOOS != "linux" {
		t.Skip("looks for leftover processes in /proc")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	s, err := Start(ctx, dir)
	if err == nil {
		s.Stop()
		t.Fatal("Start: no error")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start: %v, want context.DeadlineExceeded", err)
	}
	// Killing is asynchronous: give the kernel a moment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesMentioning(t, dir)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left running: %s", strings.Join(left, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesMentioning lists the command lines of processes with s in them.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestStartFromTemplate starts two servers: the second's data directory is
// a copy of the install the first made (no install of its own), and each
// server's databases are its own.
func TestStartFromTemplate(t *testing.T) {
	requireInstalled(t)
	a := start(t, t.TempDir())
	tmpl := templateDir(findBinary("mariadb-install-db", "mysql_install_db"), findBinary("mariadbd", "mysqld"), append(userArgs(), tuning()...))
	if _, err := os.Stat(filepath.Join(tmpl, installedMarker)); err != nil {
		t.Fatalf("no template after a Start: %v", err)
	}
	dir := t.TempDir()
	b := start(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "install.log")); err == nil {
		t.Errorf("the second server ran an install of its own (%s/install.log): the template was not used", dir)
	}
	if _, err := a.NewDatabase(t.Context(), "only_in_a"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, b.root, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'only_in_a'"); got != "0" {
		t.Errorf("a database made on the first server is on the second too (%s)", got)
	}
	if _, err := b.NewDatabase(t.Context(), "only_in_a"); err != nil {
		t.Errorf("the second server: %v", err)
	}
}

// TestStartLeavesOthersTemporaryFiles starts a server while another runs:
// the first one's temporary files stay. A starting server deletes every
// #sql* file in its tmpdir; in a shared one (/tmp) those were the other
// servers' on-disk temporary tables, and their statements failed.
func TestStartLeavesOthersTemporaryFiles(t *testing.T) {
	requireInstalled(t)
	a := start(t, t.TempDir())
	tmpdir := queryString(t, a.root, "SELECT @@tmpdir")
	// Named as a's own temporary tables are (#sql-temptable-PID-...).
	f := filepath.Join(tmpdir, fmt.Sprintf("#sql-temptable-%x-mariadbtest-%s.MAI", a.cmd.Process.Pid, randomHex(4)))
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f)
	start(t, t.TempDir())
	if _, err := os.Stat(f); err != nil {
		t.Errorf("a server's temporary file is gone after another server started (tmpdir %s): %v", tmpdir, err)
	}
}

// TestBufferPool: BufferPool's size reaches the server, and the default
// stays tuning's.
func TestBufferPool(t *testing.T) {
	requireInstalled(t)
	dir := t.TempDir()
	s, err := Start(t.Context(), dir, BufferPool("96M"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	dsn, err := s.NewDatabase(t.Context(), "pool")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := queryString(t, open(t, dsn), "SELECT @@innodb_buffer_pool_size"), "100663296"; got != want {
		t.Errorf("buffer pool with BufferPool(96M): %s bytes, want %s", got, want)
	}
	if got, want := queryString(t, open(t, NewDB(t)), "SELECT @@innodb_buffer_pool_size"), "67108864"; got != want {
		t.Errorf("buffer pool by default: %s bytes, want %s", got, want)
	}
}
