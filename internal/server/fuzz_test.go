package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/server"
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

var davLimitMethods = []string{"LOCK", "PROPFIND", "MKCOL", "PUT", "COPY", "MOVE"}

// grantedTimeout finds the timeouts a LOCK answer grants.
var (
	grantedTimeout = regexp.MustCompile(`<D:timeout>([^<]*)</D:timeout>`)
	grantedOwner   = regexp.MustCompile(`(?s)<D:owner>(.*)</D:owner>`)
)

// FuzzDAVLimits sends WebDAV requests with arbitrary Depth and Timeout
// headers and bodies: no lock is granted for longer than an hour or with
// an owner past 4 KiB, no PROPFIND of infinite depth is answered but by
// 403 propfind-finite-depth, and nothing nests deeper than 32 levels.
func FuzzDAVLimits(f *testing.F) {
	fe := newFuzzEnv(f)
	owner := func(n int) []byte {
		return []byte(`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>` + strings.Repeat("o", n) + `</D:owner></D:lockinfo>`)
	}
	f.Add(uint8(0), "f", "0", "Infinite", "", owner(10))
	f.Add(uint8(0), "f", "infinity", "Second-4294967295", "", owner(5000))
	f.Add(uint8(0), "f", "", "Infinite, Second-1", "", owner(70000))
	f.Add(uint8(1), "", "infinity", "", "", []byte(`<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`))
	f.Add(uint8(1), "", "", "", "", []byte(`<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>`))
	f.Add(uint8(1), "", "1", "", "", []byte(""))
	f.Add(uint8(1), "a//b", "", "", "", []byte(""))
	f.Add(uint8(2), strings.Repeat("a/", 33), "", "", "", []byte(""))
	f.Add(uint8(3), strings.Repeat("b/", 32)+"f", "", "", "", []byte("x"))
	f.Add(uint8(5), "up", "infinity", "", "/DAV/alice/"+strings.Repeat("c/", 31)+"up", []byte(""))
	f.Fuzz(func(t *testing.T, m uint8, rel, depth, timeout, dest string, body []byte) {
		method := davLimitMethods[int(m)%len(davLimitMethods)]
		r, err := http.NewRequest(method, "http://x/DAV/alice/"+rel, bytes.NewReader(body))
		if err != nil {
			return
		}
		if depth != "" {
			r.Header.Set("Depth", depth)
		}
		if timeout != "" {
			r.Header.Set("Timeout", timeout)
		}
		if dest != "" {
			r.Header.Set("Destination", dest)
		}
		w := fe.do(t, r)
		switch {
		case method == "LOCK" && w.Code/100 == 2:
			for _, g := range grantedTimeout.FindAllStringSubmatch(w.Body.String(), -1) {
				secs, err := strconv.Atoi(strings.TrimPrefix(g[1], "Second-"))
				if err != nil || secs > 3600 {
					t.Fatalf("LOCK with Timeout %q granted %s", timeout, g[1])
				}
			}
			if o := grantedOwner.FindStringSubmatch(w.Body.String()); o != nil && len(o[1]) > 4096 {
				t.Fatalf("LOCK granted with an owner of %d bytes", len(o[1]))
			}
		case method == "PROPFIND" && (depth == "" || strings.EqualFold(depth, "infinity")):
			// An unclean path ("a//b", "a/../b") is redirected to its clean
			// form before WebDAV sees it; the check holds there.
			if loc := w.Header().Get("Location"); w.Code/100 == 3 && loc != "" {
				r2 := r.Clone(r.Context())
				r2.URL, _ = r.URL.Parse(loc)
				r2.Body = io.NopCloser(bytes.NewReader(body))
				w = fe.do(t, r2)
			}
			// Other refusals (a path not UTF-8, not found) may come first, but
			// nothing is ever listed; the area itself always gets the 403.
			if w.Code/100 == 2 || (rel == "" && (w.Code != 403 || !strings.Contains(w.Body.String(), "<D:propfind-finite-depth/>"))) {
				t.Fatalf("PROPFIND of Depth %q: %d %s", depth, w.Code, w.Body)
			}
		}
		area := filepath.Join(fe.v.e.Root, "dav", "alice")
		filepath.WalkDir(area, func(p string, d fs.DirEntry, err error) error {
			if rel, _ := filepath.Rel(area, p); strings.Count(rel, string(filepath.Separator)) >= 32 {
				t.Fatalf("%s %s made %s, deeper than 32 levels", method, r.URL, rel)
			}
			return nil
		})
	})
}
