package server_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// cutReader gives n bytes of r, then fails as a dropped connection does.
type cutReader struct {
	r io.Reader
	n int64
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errors.New("connection reset by peer")
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	return k, err
}

// TestResumableUploadGoesOn: a large upload cut by the network goes on from
// the byte the server holds (not from the start), the content is checked
// whole, and the submission that follows uses it.
func TestResumableUploadGoesOn(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	h := v.srv.Config.Handler
	const cut = 5 << 20
	var mu sync.Mutex
	var puts []int64 // Content-Length of each resumable PUT
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/rboinc_cgi/api/v1/uploads/") {
			mu.Lock()
			puts = append(puts, r.ContentLength)
			first := len(puts) == 1
			mu.Unlock()
			if first {
				r.Body = io.NopCloser(&cutReader{r: r.Body, n: cut})
				h.ServeHTTP(httptest.NewRecorder(), r)
				hj, _ := w.(http.Hijacker)
				conn, _, _ := hj.Hijack()
				conn.Close()
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	big := bytes.Repeat([]byte("0.25 0.5 0.75\n"), (20<<20)/14)
	coor, vel := filepath.Join(dir, "x.coor"), filepath.Join(dir, "x.vel")
	os.WriteFile(coor, big, 0o644)
	os.WriteFile(vel, []byte("0 0 0\n"), 0o644)
	cl, err := client.New(srv.URL+"/rboinc_cgi", v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	cl.Retry.First = time.Millisecond
	rep, err := cl.SubmitChains(t.Context(), client.SubmitInput{Queue: "langevin", Group: "g",
		Chains: []client.Chain{{Name: "c1", Files: map[string]string{"coor_file": coor, "vel_file": vel}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Chains) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if len(puts) != 2 || puts[0] != int64(len(big)) || puts[1] != int64(len(big)-cut) {
		t.Fatalf("resumable PUTs sent %v bytes, want %d then %d", puts, len(big), len(big)-cut)
	}
	sum := md5.Sum(big)
	if !v.e.Pool.Has(hex.EncodeToString(sum[:])) {
		t.Fatal("the content is not in the pool")
	}
}

// TestResumableUploadRefusals: a piece that does not start where the
// server's part ends is refused with the offset to go on from; a content
// whose MD5 is not its name is dropped; another user's upload is none.
func TestResumableUploadRefusals(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up := v.newUpload("alice")
	data := "abcdefghij"
	path := api + "/uploads/" + up.ID + "/" + md5of(data)
	if a := v.call("alice", "PUT", path, strings.NewReader(data[:4]), "Content-Range", "bytes 0-3/10"); a.status != http.StatusConflict && a.status != http.StatusBadRequest {
		t.Fatalf("a piece not running to the end: %v", a)
	}
	// The first four bytes, as a cut transfer leaves them: here sent as a
	// whole piece announced as the whole, then cut by the reader.
	if a := v.call("alice", "PUT", path, strings.NewReader(data[4:]), "Content-Range", "bytes 4-9/10"); a.status != http.StatusConflict || a.err.Code != wire.CodeUploadOffset {
		t.Fatalf("a piece past the server's part: %v", a)
	}
	if a := v.call("alice", "PUT", path, strings.NewReader(data), "Content-Range", "bytes 0-9/10"); a.status != http.StatusCreated {
		t.Fatalf("the whole content: %v", a)
	}
	if a := v.call("alice", "HEAD", path, nil); a.status != http.StatusOK {
		t.Fatalf("HEAD: %v", a)
	}
	wrong := api + "/uploads/" + up.ID + "/" + md5of("other")
	if a := v.call("alice", "PUT", wrong, strings.NewReader(data)); a.status != http.StatusBadRequest || !strings.Contains(a.err.Error, "MD5") {
		t.Fatalf("a content under another MD5: %v", a)
	}
	if a := v.call("bob", "HEAD", path, nil); a.status != http.StatusNotFound {
		t.Fatalf("bob asking about alice's upload: %v", a)
	}
	if a := v.call("bob", "PUT", path, strings.NewReader(data)); a.status != http.StatusNotFound {
		t.Fatalf("bob writing into alice's upload: %v", a)
	}
}

// TestResumableUploadAcrossRuns: a large upload cut by an outage longer than
// the client's retries fails the run; the next run of the same command goes
// on from the byte the server holds, in the same collection.
func TestResumableUploadAcrossRuns(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	h := v.srv.Config.Handler
	const cut = 6 << 20
	var mu sync.Mutex
	var puts []int64
	down := true // the outage: every resumable request after the cut fails
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resumable := strings.HasPrefix(r.URL.Path, "/rboinc_cgi/api/v1/uploads/") && strings.Count(r.URL.Path, "/") == 6
		mu.Lock()
		first := resumable && r.Method == http.MethodPut && len(puts) == 0
		out := down && resumable && len(puts) > 0
		if resumable && r.Method == http.MethodPut {
			puts = append(puts, r.ContentLength)
		}
		mu.Unlock()
		switch {
		case first:
			r.Body = io.NopCloser(&cutReader{r: r.Body, n: cut})
			h.ServeHTTP(httptest.NewRecorder(), r)
			fallthrough
		case out:
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
		default:
			h.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()

	dir := t.TempDir()
	big := bytes.Repeat([]byte("0.5 0.25 0.125\n"), (24<<20)/15)
	coor, vel := filepath.Join(dir, "x.coor"), filepath.Join(dir, "x.vel")
	os.WriteFile(coor, big, 0o644)
	os.WriteFile(vel, []byte("0 0 0\n"), 0o644)
	in := client.SubmitInput{Queue: "langevin", Group: "g", Resume: client.OpenUploadMemory(filepath.Join(dir, "uploads")),
		Chains: []client.Chain{{Name: "c1", Files: map[string]string{"coor_file": coor, "vel_file": vel}}}}
	run := func() (*client.SubmitReport, error) {
		cl, err := client.New(srv.URL+"/rboinc_cgi", v.tokens["alice"])
		if err != nil {
			t.Fatal(err)
		}
		cl.Retry.First, cl.Retry.Attempts = time.Millisecond, 3
		in.Resume = client.OpenUploadMemory(filepath.Join(dir, "uploads"))
		return cl.SubmitChains(t.Context(), in)
	}
	if _, err := run(); err == nil || client.ExitCode(err) != client.ExitUnreachable || !strings.Contains(err.Error(), "run the same command again") {
		t.Fatalf("the run during the outage: %v (exit %d)", err, client.ExitCode(err))
	}
	mu.Lock()
	down = false
	puts = puts[:1] // the first, cut one
	mu.Unlock()
	rep, err := run()
	if err != nil || len(rep.Chains) != 1 {
		t.Fatalf("the next run: %+v %v", rep, err)
	}
	if len(puts) != 2 || puts[1] != int64(len(big)-cut) {
		t.Fatalf("PUTs carried %v bytes; the next run should have sent %d", puts, len(big)-cut)
	}
	if n := v.chainCount(); n != 1 {
		t.Fatalf("%d chains", n)
	}
}

// TestResumableCutChunksCountAtOnce: the bytes of a resumable piece cut
// off midway (kept, to go on from) count toward the scratch quota at once,
// so pieces cut one after the other cannot hold more than the quota.
func TestResumableCutChunksCountAtOnce(t *testing.T) {
	v := newEnv(t)
	v.e.Cfg.MaxScratchBytes = 1 << 20
	h := v.srv.Config.Handler
	up := v.newUpload("alice")
	var codes []int
	for i := range 4 {
		content := bytes.Repeat([]byte{byte('a' + i)}, 900<<10)
		sum := md5.Sum(content)
		req := httptest.NewRequest("PUT", "/rboinc_cgi/api/v1/uploads/"+up.ID+"/"+hex.EncodeToString(sum[:]), &cutReader{r: bytes.NewReader(content), n: 850 << 10})
		req.ContentLength = int64(len(content))
		req.Header.Set("Authorization", "Bearer "+v.tokens["alice"])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		codes = append(codes, rec.Code)
	}
	var held int64
	filepath.WalkDir(v.e.DAVRoot(store0("alice")), func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				held += fi.Size()
			}
		}
		return nil
	})
	if held > 1<<20 {
		t.Fatalf("4 pieces cut at 850 KiB (answers %v) hold %d bytes in a scratch area of at most %d", codes, held, 1<<20)
	}
}
