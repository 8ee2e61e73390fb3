package client

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

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
	rf := wire.ResultFile{Name: "x", MD5: strings.Repeat("0", 32), Path: "/x"}
	if err := c2.Download(context.Background(), rf, filepath.Join(dir, "short"), nil); err == nil {
		t.Fatal("a download cut short succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 6 {
		t.Fatalf("%d entries in the directory, want the 6 downloads only", len(ents))
	}
}
