package master_test

import (
	"context"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
)

// TestConnectTLS: a master reaches an HTTPS server with a self-signed
// certificate when given it as CAFile (as the clients' -cacert), and is
// refused without it.
func TestConnectTLS(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{NoCompute: true})
	tok, err := s.AddUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(server.New(s.E, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := srv.URL + server.Base
	// (An untrusted certificate is not tried again: see client.Transient.)
	if _, err := master.Connect(ctx, url, tok, master.Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("connecting to a server whose certificate nobody trusts: %v", err)
	}
	m, err := master.Connect(ctx, url, tok, master.Options{Dir: t.TempDir(), CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Count(ctx, master.StateRunning); err != nil {
		t.Fatal(err)
	}
}
