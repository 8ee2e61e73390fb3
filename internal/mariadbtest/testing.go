package mariadbtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// NeedEnv is the environment variable that, set to 1, turns [Shared]'s skip
// for a missing server into a failure. CI sets it.
const NeedEnv = "RBOINC_NEED_MARIADB"

// shared is the test binary's server, started by the first Shared call and
// stopped by Main.
var shared struct {
	mu      sync.Mutex
	started bool // Start was tried; srv or err is set
	srv     *Server
	dir     string
	err     error
}

var dbSeq atomic.Int64 // numbers NewDB's databases

// Shared returns the test binary's server, starting it on first use in a
// new temporary directory. If no server binary is installed it skips the
// test, or fails it when RBOINC_NEED_MARIADB=1; if the server does not
// start it fails the test (and every later caller). Use [Main] in TestMain
// to stop it and remove its directory.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.started {
		shared.started = true
		began := time.Now()
		shared.srv, shared.dir, shared.err = startShared()
		if shared.err == nil {
			t.Logf("mariadbtest: shared server in %s (port %d) started in %v",
				shared.dir, shared.srv.Port, time.Since(began).Round(time.Millisecond))
		}
	}
	if errors.Is(shared.err, ErrNotInstalled) && os.Getenv(NeedEnv) != "1" {
		t.Skipf("mariadbd not installed (set %s=1 to fail instead)", NeedEnv)
	}
	if shared.err != nil {
		t.Fatalf("mariadbtest: shared server: %v", shared.err)
	}
	return shared.srv
}

func startShared() (*Server, string, error) {
	dir, err := os.MkdirTemp("", "mariadbtest-")
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := Start(ctx, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return srv, dir, nil
}

// NewDB creates a database of its own for the test on the shared server
// (named db_<n>_<random>, with its own user) and returns its DSN over the
// unix socket. The database and its user are dropped when the test ends.
func NewDB(t testing.TB) string {
	t.Helper()
	s := Shared(t)
	name := fmt.Sprintf("db_%d_%s", dbSeq.Add(1), randomHex(4))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn, err := s.NewDatabase(ctx, name)
	if err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DropDatabase(ctx, name); err != nil {
			t.Errorf("mariadbtest: %v", err)
		}
	})
	return dsn
}

// Main is for TestMain: it runs the tests, then stops the shared server (if
// one was started) and removes its directory, and exits with the tests'
// code.
func Main(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// StopShared stops the shared server, if one was started, and removes its
// directory: for a TestMain that does more than [Main].
func StopShared() {
	shared.mu.Lock()
	srv, dir := shared.srv, shared.dir
	shared.mu.Unlock()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "mariadbtest: stopping the shared server: %v\n", err)
		}
	}
	shared.mu.Lock()
	shared.srv, shared.dir, shared.started = nil, "", false
	shared.mu.Unlock()
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(os.Stderr, "mariadbtest: %v\n", err)
		}
	}
}
