package client

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

func TestHashFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("hello\n"), 0o644)
	sum, n, err := HashFile(p)
	if err != nil || n != 6 || sum != "b1946ac92492d2347c6235b4d2611184" {
		t.Fatalf("HashFile = %s %d %v", sum, n, err)
	}
	if _, _, err := HashFile(p + "x"); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func TestDownloadVerifies(t *testing.T) {
	f, c := newFake(t)
	body := bytes.Repeat([]byte("result "), 10000)
	rf := f.addResult("g", "c1", "c1-U_g-0-1-RND0001_0", body)
	dir := t.TempDir()
	dest := filepath.Join(dir, "out.dcd")
	var seen atomic.Int64
	if err := c.Download(context.Background(), rf, dest, func(n int64) { seen.Add(n) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, body) {
		t.Fatal("downloaded content differs")
	}
	if seen.Load() != int64(len(body)) {
		t.Errorf("progress saw %d bytes, want %d", seen.Load(), len(body))
	}

	// The server sends other bytes than announced: nothing may remain.
	bad := rf
	bad.MD5 = strings.Repeat("0", 32)
	dest2 := filepath.Join(dir, "bad.dcd")
	err := c.Download(context.Background(), bad, dest2, nil)
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("mismatch: err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out.dcd" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v, want only out.dcd", names)
	}

	// A missing file is the server's refusal, and leaves nothing either.
	gone := rf
	gone.Path += "x"
	if err := c.Download(context.Background(), gone, dest2, nil); ExitCode(err) != ExitRefused {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat(dest2); !os.IsNotExist(err) {
		t.Fatal("a file was left for a failed download")
	}
}

func TestPutFile(t *testing.T) {
	f, c := newFake(t)
	p := filepath.Join(t.TempDir(), "in")
	os.WriteFile(p, []byte("input data"), 0o644)
	sum, _, _ := HashFile(p)
	if err := c.PutFile(context.Background(), "/DAV/u/up1/", sum, p, nil); err != nil {
		t.Fatal(err)
	}
	if string(f.pool[sum]) != "input data" {
		t.Fatal("server did not get the content")
	}
	if err := c.PutFile(context.Background(), "/DAV/u/up1/", strings.Repeat("a", 32), p, nil); ExitCode(err) != ExitRefused {
		t.Fatalf("wrong md5: %v", err)
	}
}

// Downloads of sizes around the write buffer's arrive whole, and one cut
// short leaves nothing behind.
func TestDownloadSizes(t *testing.T) {
	f, c := newFake(t)
	dir := t.TempDir()
	for _, size := range []int{0, 1, writeBufSize - 1, writeBufSize, writeBufSize + 1, 3*writeBufSize + 17} {
		body := make([]byte, size)
		rand.NewChaCha8([32]byte{byte(size)}).Read(body)
		rf := f.addResult("g", "c1", fmt.Sprintf("c1-U_g-0-1-RND%04d_0", size%10000), body)
		dest := filepath.Join(dir, fmt.Sprint("f", size))
		if err := c.Download(context.Background(), rf, dest, nil); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if got, _ := os.ReadFile(dest); !bytes.Equal(got, body) {
			t.Fatalf("size %d: %d bytes arrived, not the same", size, len(got))
		}
	}
	short := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(2*writeBufSize))
		w.Write(make([]byte, writeBufSize+5))
	}))
	defer short.Close()
	c2, err := New(short.URL+"/rboinc_cgi", "tok")
	if err != nil {
		t.Fatal(err)
	}
	c2.Retry.Attempts = 1
	rf := wire.ResultFile{Name: "x", MD5: strings.Repeat("0", 32), Size: 2 * writeBufSize, Path: "/x"}
	if err := c2.Download(context.Background(), rf, filepath.Join(dir, "short"), nil); err == nil {
		t.Fatal("a download cut short succeeded")
	}
	// Nothing under the file's name; what came is kept, hidden, for the
	// next try to go on from.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 7 {
		t.Fatalf("%d entries in the directory, want the 6 downloads and one partial", len(ents))
	}
	if fi, err := os.Stat(partialName(filepath.Join(dir, "short"), rf)); err != nil || fi.Size() != writeBufSize+5 {
		t.Fatalf("partial download: %v %v", fi, err)
	}
}

// TestDownloadResumes: a transfer cut by the network is taken up where it
// stopped with a Range request, within the same run (a retry), and the
// whole content is verified at the end.
func TestDownloadResumes(t *testing.T) {
	body := make([]byte, 5*writeBufSize+123)
	rand.NewChaCha8([32]byte{7}).Read(body)
	sum := md5.Sum(body)
	cut := 2*writeBufSize + 11
	var served []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(served) == 0 {
			// The first answer stops short: the connection dies.
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body[:cut])
			served = append(served, cut)
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		cw := &countingWriter{ResponseWriter: w}
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		http.ServeContent(cw, r, "x", time.Time{}, bytes.NewReader(body))
		served = append(served, cw.n)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/rboinc_cgi", "tok")
	if err != nil {
		t.Fatal(err)
	}
	c.Retry.First = time.Millisecond
	dest := filepath.Join(t.TempDir(), "f")
	rf := wire.ResultFile{Name: "f", MD5: hex.EncodeToString(sum[:]), Size: int64(len(body)), Path: "/x"}
	if err := c.Download(context.Background(), rf, dest, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, body) {
		t.Fatal("the resumed download differs")
	}
	if len(served) != 2 || served[1] != len(body)-cut {
		t.Fatalf("bytes served per request %v, want %d then %d", served, cut, len(body)-cut)
	}
	if _, err := os.Stat(partialName(dest, rf)); !os.IsNotExist(err) {
		t.Fatal("the partial file outlived the download")
	}
}

type countingWriter struct {
	http.ResponseWriter
	n int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += n
	return n, err
}

// TestDownloadCompletePartial: a partial file that already holds the whole
// content (a try cut between the last byte and the rename) is verified and
// taken without a request; one of the whole size but damaged is fetched
// again whole, not asked for a range past its end (HTTP 416).
func TestDownloadCompletePartial(t *testing.T) {
	body := make([]byte, 3*writeBufSize+7)
	rand.NewChaCha8([32]byte{9}).Read(body)
	sum := md5.Sum(body)
	var ranges []string
	var statuses []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		http.ServeContent(cw, r, "x", time.Time{}, bytes.NewReader(body))
		ranges = append(ranges, r.Header.Get("Range"))
		statuses = append(statuses, cw.status)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/rboinc_cgi", "tok")
	if err != nil {
		t.Fatal(err)
	}
	c.Retry.First = time.Millisecond
	rf := wire.ResultFile{Name: "f", MD5: hex.EncodeToString(sum[:]), Size: int64(len(body)), Path: "/x"}
	damaged := bytes.Clone(body)
	damaged[len(damaged)/2] ^= 1
	for _, tc := range []struct {
		name     string
		partial  []byte
		requests []string // the Range header of each request
	}{
		{"whole", body, nil},
		{"whole but damaged", damaged, []string{""}},
	} {
		ranges, statuses = nil, nil
		dest := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(partialName(dest, rf), tc.partial, 0o644); err != nil {
			t.Fatal(err)
		}
		var progress int64
		if err := c.Download(context.Background(), rf, dest, func(n int64) { progress += n }); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, _ := os.ReadFile(dest); !bytes.Equal(got, body) {
			t.Fatalf("%s: the download differs", tc.name)
		}
		if !slices.Equal(ranges, tc.requests) {
			t.Errorf("%s: requests with Range %q (statuses %v), want %q", tc.name, ranges, statuses, tc.requests)
		}
		if progress < rf.Size {
			t.Errorf("%s: progress told %d of %d bytes", tc.name, progress, rf.Size)
		}
		if _, err := os.Stat(partialName(dest, rf)); !os.IsNotExist(err) {
			t.Errorf("%s: the partial file outlived the download", tc.name)
		}
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
