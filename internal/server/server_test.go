package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
	"github.com/rboinc/rboinc/workflow/wire"
)

type env struct {
	t      testing.TB
	srv    *httptest.Server
	tokens map[string]string
	e      *engine.Engine
	db     *store.DB     // the state, opened beside the engine as rboinc-server's commands do
	logs   *lockedBuffer // what the server logged
}

// lockedBuffer is a bytes.Buffer for a logger written from many requests.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t testing.TB) *env { return newEnvAt(t, t.TempDir()) }

// newEnvAt is newEnv with the server root in root.
func newEnvAt(t testing.TB, root string) *env {
	ctx := context.Background()
	testbin.Preinstall(root, testExe(t))
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: testExe(t), URLBase: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db, err := engine.OpenState(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	v := &env{t: t, e: e, db: db, tokens: map[string]string{}, logs: &lockedBuffer{}}
	for _, name := range []string{"alice", "bob"} {
		tok := server.NewToken()
		if _, err := db.AddUser(ctx, name, server.HashToken(tok)); err != nil {
			t.Fatal(err)
		}
		v.tokens[name] = tok
	}
	v.srv = httptest.NewServer(server.New(e, slog.New(slog.NewTextHandler(v.logs, nil))).Handler())
	t.Cleanup(v.srv.Close)
	return v
}

func (v *env) do(user, method, path, body string) *http.Response {
	v.t.Helper()
	req, _ := http.NewRequest(method, v.srv.URL+path, strings.NewReader(body))
	if user != "" {
		req.Header.Set("Authorization", "Bearer "+v.tokens[user])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	v.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestLivenessIsOpenEverythingElseAuthenticated(t *testing.T) {
	v := newEnv(t)
	if r := v.do("", "GET", "/rboinc_cgi", ""); r.StatusCode != 200 {
		t.Fatalf("liveness: %d", r.StatusCode)
	}
	for _, p := range []string{"GET /rboinc_cgi/api/v1/queues", "GET /rboinc_cgi/api/v1/status", "POST /rboinc_cgi/api/v1/uploads", "PROPFIND /DAV/alice/"} {
		m, path, _ := strings.Cut(p, " ")
		if r := v.do("", m, path, ""); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d", p, r.StatusCode)
		}
	}
	// Basic auth with the token as password works; a wrong user name does not.
	req, _ := http.NewRequest("GET", v.srv.URL+"/rboinc_cgi/api/v1/whoami", nil)
	req.SetBasicAuth("alice", v.tokens["alice"])
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("basic auth: %v %v", r, err)
	}
	var who wire.WhoAmI
	json.NewDecoder(r.Body).Decode(&who)
	r.Body.Close()
	if who.User != "alice" {
		t.Fatalf("whoami = %q", who.User)
	}
	req.SetBasicAuth("bob", v.tokens["alice"])
	if r, _ := http.DefaultClient.Do(req); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("alice's token as bob: %d", r.StatusCode)
	}
}

func TestDAVConfinedToOwnArea(t *testing.T) {
	v := newEnv(t)
	r := v.do("alice", "POST", "/rboinc_cgi/api/v1/uploads", "")
	var up wire.UploadResponse
	json.NewDecoder(r.Body).Decode(&up)
	if !strings.HasPrefix(up.DAVPath, "/DAV/alice/up") {
		t.Fatalf("upload path %q", up.DAVPath)
	}
	if r := v.do("alice", "PUT", up.DAVPath+"5d41402abc4b2a76b9719d911017c592", "hello"); r.StatusCode != http.StatusCreated {
		t.Fatalf("alice PUT: %d", r.StatusCode)
	}
	for _, m := range []string{"GET", "PUT", "DELETE", "PROPFIND", "MKCOL"} {
		if r := v.do("bob", m, up.DAVPath+"5d41402abc4b2a76b9719d911017c592", "x"); r.StatusCode != http.StatusForbidden {
			t.Errorf("bob %s in alice's area: %d", m, r.StatusCode)
		}
	}
	for _, p := range []string{"/DAV/../alice/", "/DAV/%2e%2e/etc/", "/DAV/", "/DAV/bob/../alice/x"} {
		r := v.do("bob", "PUT", p+"f", "x")
		if r.StatusCode < 400 {
			t.Errorf("bob PUT %s: %d", p, r.StatusCode)
		}
	}
	data, err := os.ReadFile(filepath.Join(v.e.DAVRoot(store0("alice")), strings.TrimPrefix(up.DAVPath, "/DAV/alice/"), "5d41402abc4b2a76b9719d911017c592"))
	if err != nil || string(data) != "hello" {
		t.Fatalf("alice's upload changed: %q %v", data, err)
	}
}

func TestErrorsAreJSON(t *testing.T) {
	v := newEnv(t)
	r := v.do("alice", "GET", "/rboinc_cgi/api/v1/queues/nosuch", "")
	var e wire.Error
	json.NewDecoder(r.Body).Decode(&e)
	if r.StatusCode != 404 || e.Code != wire.CodeUnknownQueue {
		t.Fatalf("%d %+v", r.StatusCode, e)
	}
	r = v.do("alice", "POST", "/rboinc_cgi/api/v1/submit", "{not json")
	if r.StatusCode != 400 {
		t.Fatalf("bad JSON: %d", r.StatusCode)
	}
	r = v.do("alice", "GET", "/rboinc_cgi/api/v1/files/g/..%2f..%2fstate.db", "")
	if r.StatusCode < 400 {
		t.Fatalf("traversal in file name: %d", r.StatusCode)
	}
}

func store0(name string) store.User { return store.User{Name: name} }
