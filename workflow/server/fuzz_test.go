package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// fuzzEnv is a server with alice's chain, results and an upload in place,
// and a way to send one request through the real handler.
type fuzzEnv struct {
	v *env
	h http.Handler
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	v := newEnv(f)
	c := v.submit("alice", "g", "c", 2)
	v.finish(c.Chains[0].FirstWU)
	v.upload("alice", "1 2 3\n")
	return &fuzzEnv{v: v, h: server.New(v.e, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler()}
}

// do sends one request as alice; the answer must not be a server failure,
// and an error must come as a wire.Error.
func (fe *fuzzEnv) do(t *testing.T, r *http.Request) *httptest.ResponseRecorder {
	r.Header.Set("Authorization", "Bearer "+fe.v.tokens["alice"])
	w := httptest.NewRecorder()
	fe.h.ServeHTTP(w, r)
	if w.Code >= 500 {
		t.Fatalf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body)
	}
	if w.Code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		var e wire.Error
		if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error == "" {
			t.Fatalf("%s %s: %d with a bad error body %q", r.Method, r.URL, w.Code, w.Body)
		}
	}
	// Nothing may appear beside the server root or beside alice's area.
	if ents, _ := os.ReadDir(filepath.Dir(fe.v.e.Root)); len(ents) != 1 {
		t.Fatalf("%s %s: wrote beside the server root: %v", r.Method, r.URL, ents)
	}
	if ents, _ := os.ReadDir(filepath.Join(fe.v.e.Root, "dav")); len(ents) != 1 {
		t.Fatalf("%s %s: wrote beside alice's scratch area: %v", r.Method, r.URL, ents)
	}
	return w
}

var postPaths = []string{wire.PathSubmit, wire.PathStop, wire.PathPurge, wire.PathAck, wire.PathMissing,
	wire.PathBatchQuery, wire.PathBatchAbort, wire.PathBatchRetire, wire.PathBatchLease, wire.PathNotifyEmail}

// FuzzRequestBodies sends arbitrary bodies to every endpoint that decodes
// one.
func FuzzRequestBodies(f *testing.F) {
	fe := newFuzzEnv(f)
	f.Add(uint8(0), []byte(`{"queue":"langevin","group":"g","options":{"num_steps":2,"dry_run":true},"chains":[{"name":"x","files":{"coor_file":{"md5":"b026324c6904b2a9cb4b88d6d61c81d1","size":2}}}]}`))
	f.Add(uint8(1), []byte(`{"group":"g","name":"c"}`))
	f.Add(uint8(2), []byte(`{"group":"nosuch"}`))
	f.Add(uint8(3), []byte(`{"group":"g","files":["c-ALICE_g-0-2-RND0001_0"]}`))
	f.Add(uint8(4), []byte(`{"md5s":["b026324c6904b2a9cb4b88d6d61c81d1"]}`))
	f.Add(uint8(0), []byte(`{"queue":"../x"}`))
	f.Add(uint8(0), []byte(`[[[[`))
	f.Add(uint8(0), []byte(`{"queue":"langevin","group":"b","batch":{"name":"b#1","lease":1},"options":{"dry_run":true},"chains":[{"name":"x","job":"b#1.0","args":["-n","5"],"files":{}}]}`))
	f.Add(uint8(5), []byte(`{"min_mod_time":1.5,"names":["b#1"]}`))
	f.Add(uint8(6), []byte(`{"jobs":["b#1.0","x"]}`))
	f.Add(uint8(7), []byte(`{"name":"b#1"}`))
	f.Add(uint8(8), []byte(`{"name":"b#1","lease":-1}`))
	f.Add(uint8(9), []byte(`{"address":"a@example.org","code":"12345678"}`))
	f.Add(uint8(9), []byte(`{"address":"a@example.org\r\nBcc: v@example.org"}`))
	f.Add(uint8(0), []byte(`{"queue":"langevin","group":"g","options":{"dry_run":true,"notify":["http://[::ffff:127.0.0.1]/","v@example.org"]},"chains":[{"name":"x","files":{}}]}`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		p := postPaths[int(which)%len(postPaths)]
		if p == wire.PathSubmit && !bytes.Contains(body, []byte(`"dry_run":true`)) && len(body) > 4096 {
			return // keep create_work runs small
		}
		fe.do(t, httptest.NewRequest("POST", server.Base+p, bytes.NewReader(body)))
	})
}

// FuzzQueries sends arbitrary group and name values to the GET endpoints
// and arbitrary file names to the download endpoint.
func FuzzQueries(f *testing.F) {
	fe := newFuzzEnv(f)
	f.Add("g", "c", "c-ALICE_g-0-2-RND0001_0")
	f.Add("../x", "", "..%2f..%2fstate.db")
	f.Add("", "c", "x_0")
	f.Fuzz(func(t *testing.T, group, name, file string) {
		q := url.Values{"group": {group}, "name": {name}}.Encode()
		fe.do(t, httptest.NewRequest("GET", server.Base+wire.PathStatus+"?"+q, nil))
		fe.do(t, httptest.NewRequest("GET", server.Base+wire.PathResults+"?"+q, nil))
		fe.do(t, httptest.NewRequest("GET", server.Base+wire.PathBatchOutput+"?"+url.Values{"job": {name}}.Encode(), nil))
		u := &url.URL{Path: server.Base + wire.PathFiles + "/" + group + "/" + file}
		if r, err := http.NewRequest("GET", "http://x"+u.EscapedPath(), nil); err == nil {
			fe.do(t, r)
		}
		u = &url.URL{Path: server.Base + wire.PathQueues + "/" + name}
		if r, err := http.NewRequest("GET", "http://x"+u.EscapedPath(), nil); err == nil {
			fe.do(t, r)
		}
	})
}

var davMethods = []string{"GET", "PUT", "DELETE", "MKCOL", "PROPFIND", "COPY", "MOVE", "LOCK", "PROPPATCH", "HEAD", "OPTIONS"}

// FuzzDAV sends arbitrary WebDAV requests into alice's own area: whatever
// the path, Destination or body, nothing lands outside it.
func FuzzDAV(f *testing.F) {
	fe := newFuzzEnv(f)
	f.Add(uint8(1), "up/x", "", []byte("data"))
	f.Add(uint8(5), "up/x", "/DAV/alice/up/y", []byte(""))
	f.Add(uint8(6), "up/x", "/DAV/alice/../bob/y", []byte(""))
	f.Add(uint8(3), "%2e%2e/x/", "", []byte(""))
	f.Add(uint8(4), "", "", []byte(`<?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>`))
	f.Fuzz(func(t *testing.T, m uint8, rel, dest string, body []byte) {
		r, err := http.NewRequest(davMethods[int(m)%len(davMethods)], "http://x/DAV/alice/"+rel, bytes.NewReader(body))
		if err != nil {
			return
		}
		if dest != "" {
			r.Header.Set("Destination", dest)
		}
		r.Header.Set("Depth", "1")
		fe.do(t, r)
	})
}
