package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// bulkProxy stands between the client and the real server: it counts the
// requests and can answer a bulk download as an older server would, cut
// its answer after some bytes, or damage one file in it.
type bulkProxy struct {
	h        http.Handler
	noBulk   bool   // answer 404, as a server without the route
	cutAfter int    // > 0: the bulk answer stops (connection dropped) after so many bytes
	damage   string // one file's content to change in the bulk answer
	cutIn    string // the bulk answer stops in the middle of this text
	dead     atomic.Bool
	bulk     atomic.Int32 // bulk requests
	perFile  atomic.Int32 // per-file downloads
}

func (p *bulkProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.dead.Load() {
		panic(http.ErrAbortHandler)
	}
	switch {
	case strings.HasSuffix(r.URL.Path, wire.PathFilesBulk):
		p.bulk.Add(1)
		if p.noBulk {
			http.NotFound(w, r)
			return
		}
		if p.cutAfter > 0 || p.damage != "" || p.cutIn != "" {
			w = &tamperWriter{ResponseWriter: w, left: p.cutAfter, damage: []byte(p.damage), cutIn: []byte(p.cutIn)}
		}
	case strings.Contains(r.URL.Path, wire.PathFiles+"/"):
		p.perFile.Add(1)
	}
	p.h.ServeHTTP(w, r)
}

type tamperWriter struct {
	http.ResponseWriter
	left   int
	damage []byte
	cutIn  []byte
	mu     sync.Mutex
}

func (t *tamperWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.damage) > 0 {
		if k := bytes.Index(b, t.damage); k >= 0 {
			b = bytes.Clone(b)
			b[k] ^= 1
			t.damage = nil
		}
	}
	if len(t.cutIn) > 0 {
		if k := bytes.Index(b, t.cutIn); k >= 0 {
			t.ResponseWriter.Write(b[:k+len(t.cutIn)/2])
			http.NewResponseController(t.ResponseWriter).Flush()
			panic(http.ErrAbortHandler)
		}
	}
	if t.left > 0 {
		if len(b) >= t.left {
			t.ResponseWriter.Write(b[:t.left])
			http.NewResponseController(t.ResponseWriter).Flush()
			panic(http.ErrAbortHandler) // the connection drops mid-answer
		}
		t.left -= len(b)
	}
	return t.ResponseWriter.Write(b)
}

func (t *tamperWriter) Flush() { http.NewResponseController(t.ResponseWriter).Flush() }

// retrieveVia runs a retrieval of alice's group g through p.
func (v *env) retrieveVia(t *testing.T, p *bulkProxy, dir string) (*client.RetrieveReport, error) {
	t.Helper()
	p.h = v.srv.Config.Handler
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL+"/rboinc_cgi", v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	c.Retry.Attempts = 1
	return c.Retrieve(context.Background(), client.RetrieveInput{Group: "g", Dir: dir, LockFile: filepath.Join(t.TempDir(), "lock")})
}

// haveExactly: dir holds the listed files, each whole, and nothing else
// (no partial or temporary file).
func haveExactly(t *testing.T, dir string, files []wire.ResultFile) { haveFiles(t, dir, files, false) }

// haveFiles is haveExactly, with parts: the per-file downloads' hidden
// partial files (kept for the next run to resume), empty, may be there
// too.
func haveFiles(t *testing.T, dir string, files []wire.ResultFile, parts bool) {
	t.Helper()
	want := map[string]string{}
	for _, f := range files {
		want[client.LocalName(f)] = f.MD5
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		md5, ok := want[e.Name()]
		if !ok && parts && strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".part-") {
			if fi, err := e.Info(); err != nil || fi.Size() != 0 {
				t.Errorf("partial file %s holds bytes", e.Name())
			}
			continue
		}
		if !ok {
			t.Errorf("%s in the download directory", e.Name())
			continue
		}
		got, _, err := client.HashFile(filepath.Join(dir, e.Name()))
		if err != nil || got != md5 {
			t.Errorf("%s: MD5 %s, want %s (%v)", e.Name(), got, md5, err)
		}
		delete(want, e.Name())
	}
	for n := range want {
		t.Errorf("%s missing", n)
	}
}

func TestRetrieveInBulk(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 20)
	p := &bulkProxy{}
	dir := t.TempDir()
	rep, err := v.retrieveVia(t, p, dir)
	if err != nil || rep.Retrieved != len(files) || rep.Acknowledged != len(files) {
		t.Fatalf("retrieve: %+v %v", rep, err)
	}
	haveExactly(t, dir, files)
	if p.bulk.Load() != 1 || p.perFile.Load() != 0 {
		t.Fatalf("%d bulk and %d per-file downloads, want 1 and 0", p.bulk.Load(), p.perFile.Load())
	}
	if left := v.results("alice", "g"); len(left) != 0 {
		t.Fatalf("%d results left on the server", len(left))
	}
}

func TestRetrieveFromAServerWithoutBulk(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 5)
	p := &bulkProxy{noBulk: true}
	dir := t.TempDir()
	rep, err := v.retrieveVia(t, p, dir)
	if err != nil || rep.Retrieved != len(files) || rep.Acknowledged != len(files) {
		t.Fatalf("retrieve: %+v %v", rep, err)
	}
	haveExactly(t, dir, files)
	if p.bulk.Load() != 1 || int(p.perFile.Load()) != len(files) {
		t.Fatalf("%d bulk and %d per-file downloads, want 1 and %d", p.bulk.Load(), p.perFile.Load(), len(files))
	}
}

// One file damaged in the stream is fetched alone; the others come in
// the stream.
func TestRetrieveBulkDamagedFileAlone(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 5)
	p := &bulkProxy{damage: "output 1 of " + files[4].WU}
	dir := t.TempDir()
	rep, err := v.retrieveVia(t, p, dir)
	if err != nil || rep.Retrieved != len(files) || rep.Acknowledged != len(files) {
		t.Fatalf("retrieve: %+v %v", rep, err)
	}
	haveExactly(t, dir, files)
	if p.bulk.Load() != 1 || p.perFile.Load() != 1 {
		t.Fatalf("%d bulk and %d per-file downloads, want 1 and 1", p.bulk.Load(), p.perFile.Load())
	}
}

// A stream cut in the middle loses nothing: what came whole is kept, the
// rest is fetched per file; no partial file is left.
func TestRetrieveBulkCutStream(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 10)
	cuts := []int{1, 700, 5000, 12000}
	for i, cut := range cuts {
		p := &bulkProxy{cutAfter: cut}
		dir := t.TempDir()
		rep, err := v.retrieveVia(t, p, dir)
		if err != nil || rep.Retrieved != len(files) {
			t.Fatalf("cut after %d: %+v %v", cut, rep, err)
		}
		haveExactly(t, dir, files)
		if n := int(p.perFile.Load()); n == 0 || n == len(files) && cut > 5000 {
			t.Errorf("cut after %d: %d per-file downloads", cut, n)
		}
		if t.Failed() || i == len(cuts)-1 {
			return
		}
		// Keep the files on the server for the next cut: the first
		// retrieval acknowledged them; make the group again.
		v = newEnv(t)
		files = v.finishedGroup("alice", "g", 10)
	}
}

// The server dies in the middle of the stream: what came whole is kept
// and acknowledged later, nothing else is written or acknowledged, and
// the next retrieval brings the rest.
func TestRetrieveBulkServerDiesMidStream(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 10)
	// Cut inside a file's content, the seventh of the stream's.
	p := &bulkProxy{cutIn: "output 0 of " + files[6].WU}
	dir := t.TempDir()
	p.h = v.srv.Config.Handler
	// Dead from the cut on: the per-file downloads and the ack fail.
	p2 := &dyingProxy{bulkProxy: p}
	srv := httptest.NewServer(p2)
	defer srv.Close()
	c, err := client.New(srv.URL+"/rboinc_cgi", v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	c.Retry.Attempts = 1
	rep, err := c.Retrieve(context.Background(), client.RetrieveInput{Group: "g", Dir: dir, LockFile: filepath.Join(t.TempDir(), "lock")})
	if err == nil || rep.Retrieved != 6 || rep.Acknowledged != 0 {
		t.Fatalf("retrieve through a dying server: %+v %v", rep, err)
	}
	// The bulk stream's part: whole files only, the cut one's bytes gone.
	// The per-file downloads that followed failed and keep their (empty)
	// partial files to resume.
	haveFiles(t, dir, files[:rep.Retrieved], true)
	if left := v.results("alice", "g"); len(left) != len(files) {
		t.Fatalf("%d results left on the server, want all %d", len(left), len(files))
	}
	// The server is back.
	rep, err = v.retrieveVia(t, &bulkProxy{}, dir)
	if err != nil || rep.Retrieved+rep.Present != len(files) || rep.Acknowledged != len(files) {
		t.Fatalf("retrieve again: %+v %v", rep, err)
	}
	haveExactly(t, dir, files)
}

type dyingProxy struct{ *bulkProxy }

func (d *dyingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, wire.PathFilesBulk) {
		defer d.dead.Store(true) // also when the cut panics
	}
	d.bulkProxy.ServeHTTP(w, r)
}
