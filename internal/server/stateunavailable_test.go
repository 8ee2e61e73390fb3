package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/testbin"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestStateDatabaseAwayIsRetryable: while MariaDB (the state) is down, a
// request is answered 503 with Retry-After (clients retry it), not 401 (a
// token's look-up that failed) nor 500; once MariaDB is back on its data
// directory, the same request succeeds on the same server process.
func TestStateDatabaseAwayIsRetryable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB of its own")
	}
	// It waits mostly on that MariaDB starting, twice: beside the others.
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rbaway")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := mariadbtest.Start(ctx, dir)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { srv.Stop() })
	dsn, err := srv.NewDatabase(ctx, "state")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	testbin.Preinstall(root, testExe(t))
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: testExe(t), URLBase: "http://127.0.0.1:1", StateDB: "mysql://" + dsn}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, err := engine.OpenState(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := server.AddUser(ctx, db, "alice")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(e, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	defer hs.Close()
	get := func() (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/rboinc_cgi"+wire.PathStatus+"?group=g", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	before, want := get()
	if before.StatusCode == http.StatusUnauthorized || before.StatusCode/100 == 5 {
		t.Fatalf("before the kill: %d %s", before.StatusCode, want)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	resp, body := get()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, wire.CodeServerBusy) {
		t.Errorf("with MariaDB down: %d (Retry-After %q) %s; want 503 with Retry-After, which clients retry", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if !client.Transient(&client.APIError{Status: resp.StatusCode}) {
		t.Errorf("the client does not retry a %d", resp.StatusCode)
	}
	if srv, err = mariadbtest.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if resp, body := get(); resp.StatusCode != before.StatusCode || body != want {
		t.Errorf("after MariaDB came back: %d %s; before the kill: %d %s", resp.StatusCode, body, before.StatusCode, want)
	}
}
