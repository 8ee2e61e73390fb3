// Package standinserver runs, for tests, examples and benchmarks, a real
// rboinc server in the test's own process on a fresh server root with the
// embedded BOINC stand-in: the HTTP API on a loopback port, the creator of
// next steps and, unless told otherwise, the stand-in's volunteer loop,
// which computes work units with the queue's real application. The
// stand-in's create_work and hook are the real programs, built once per
// test process.
package standinserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinctest"
	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/standin"
	"github.com/rboinc/rboinc/internal/testbin"
)

// Options say what kind of server to start.
type Options struct {
	// NoCompute leaves the stand-in's volunteer loop off: nothing
	// computes work units; Finish plays BOINC instead.
	NoCompute bool
	// Settings are set in the root's rboinc.json before the server starts
	// (e.g. "max_error_results": 1).
	Settings map[string]any
}

// Server is one running server.
type Server struct {
	URL  string // the API's base, http://127.0.0.1:PORT/rboinc_cgi
	Root string
	E    *engine.Engine
}

// Built returns the directory holding the built rboinc-server and
// rboinc-hook, from the test run's shared build (testbin).
func Built() (string, error) {
	return testbin.Build(testbin.Server, testbin.Hook)
}

// Start runs a server until the test ends.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	// Not tb.TempDir: parts of the server that stop on their own time
	// (the creator) may still write just after stop.
	dir, err := os.MkdirTemp("", "rboinc-standinserver-root")
	if err != nil {
		tb.Fatal(err)
	}
	s, stop, err := StartDir(dir, o)
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stop()
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return s
}

// StartDir runs a server on a fresh root under dir until stop is called
// (for examples, which have no testing.TB).
func StartDir(dir string, o Options) (*Server, func(), error) {
	bin, err := Built()
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	root := filepath.Join(dir, "root")
	testbin.Preinstall(root, filepath.Join(bin, "rboinc-server"))
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: filepath.Join(bin, "rboinc-server"), URLBase: "http://127.0.0.1:1"}); err != nil {
		return nil, nil, err
	}
	if err := applySettings(root, o.Settings); err != nil {
		return nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("RBOINC_TEST_SERVER_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	e, err := engine.Open(ctx, root, log)
	if err != nil {
		return nil, nil, err
	}
	// The daemons `serve` runs, the volunteer's with a shorter poll.
	ds := []daemon.Daemon{daemon.Creator(e, daemon.CreatorPoll), daemon.Notifier(e, daemon.NotifierPoll),
		daemon.Collector(e, daemon.CollectEvery, daemon.CollectGrace)}
	if !o.NoCompute {
		ds = append(ds, daemon.Standin(e, &standin.Volunteer{ProjectDir: e.Proj.Dir, Logger: log, Poll: 50 * time.Millisecond}))
	}
	sctx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Beside(sctx, log, func(ctx context.Context) error {
			return server.Serve(ctx, e, "127.0.0.1:0", log, func(addr string) { ready <- addr })
		}, ds...)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		e.Close()
		return nil, nil, fmt.Errorf("the server did not start: %w", err)
	}
	stop := func() {
		cancel()
		<-done
		e.Close()
	}
	return &Server{URL: "http://" + addr + server.Base, Root: root, E: e}, stop, nil
}

// applySettings sets keys of the root's rboinc.json.
func applySettings(root string, set map[string]any) error {
	if len(set) == 0 {
		return nil
	}
	path := filepath.Join(root, engine.ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cfg := map[string]any{}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	maps.Copy(cfg, set)
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// AddUser makes a user and returns its token.
func (s *Server) AddUser(name string) (string, error) {
	tok := server.NewToken()
	if _, err := s.E.AddUser(context.Background(), name, server.HashToken(tok)); err != nil {
		return "", err
	}
	return tok, nil
}

// Finish plays BOINC (with NoCompute): every work unit not decided yet
// finishes, each with the langevin application's three outputs, and
// rboinc's native assimilator records them. It returns how many.
func (s *Server) Finish(ctx context.Context) (int, error) {
	db, err := s.E.OpenBoincDB(ctx)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	n, err := boinctest.FinishAll(ctx, db, s.E.Proj, nil)
	if err != nil || n == 0 {
		return n, err
	}
	a := &engine.Assimilator{E: s.E, BDB: db, Batch: 500}
	got, err := a.Pass(ctx)
	if err != nil {
		return got, err
	}
	if got != n {
		return got, fmt.Errorf("assimilated %d of the %d work units finished", got, n)
	}
	return n, nil
}
