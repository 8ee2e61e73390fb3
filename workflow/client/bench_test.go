package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// The client's transfers against a minimal in-memory server, so that only
// the client's side is measured; bench/run.sh measures them end to end
// against the real server next to curl.

// benchServer serves nFiles result files of one body, takes PUTs and acks.
type benchServer struct {
	body   []byte
	md5    string
	nFiles int
}

func (s *benchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := strings.TrimPrefix(r.URL.Path, "/rboinc_cgi")
	switch {
	case r.Method == http.MethodPut:
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	case api == wire.PathResults:
		res := wire.ResultsResponse{}
		for i := 0; i < s.nFiles; i++ {
			name := fmt.Sprintf("c%d-U_g-0-1-RND0001_0", i)
			res.Files = append(res.Files, wire.ResultFile{Group: "g", Chain: fmt.Sprintf("c%d", i), Name: name, MD5: s.md5,
				Size: int64(len(s.body)), Path: wire.PathFiles + "/g/" + name})
		}
		json.NewEncoder(w).Encode(res)
	case strings.HasPrefix(api, wire.PathFiles+"/"):
		w.Header().Set("Content-Length", fmt.Sprint(len(s.body)))
		w.Write(s.body)
	case api == wire.PathAck:
		var req wire.AckRequest
		json.NewDecoder(r.Body).Decode(&req)
		json.NewEncoder(w).Encode(wire.CountResponse{Count: len(req.Files)})
	default:
		http.NotFound(w, r)
	}
}

func newBenchClient(b *testing.B, size, nFiles int) (*Client, *benchServer) {
	body := make([]byte, size)
	rand.NewChaCha8([32]byte{1}).Read(body)
	s := &benchServer{body: body, md5: md5hex(body), nFiles: nFiles}
	srv := httptest.NewServer(s)
	b.Cleanup(srv.Close)
	c, err := New(srv.URL+"/rboinc_cgi", "tok")
	if err != nil {
		b.Fatal(err)
	}
	return c, s
}

func benchShort(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// BenchmarkHashFile: hashing an input before upload (compare md5sum).
func BenchmarkHashFile(b *testing.B) {
	size := benchShort(64<<20, 4<<20)
	p := filepath.Join(b.TempDir(), "f")
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{2}).Read(data)
	os.WriteFile(p, data, 0o644)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := HashFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDownload: one result file (1 MB): streamed to a temporary file,
// hashed on the way, synced, renamed.
func BenchmarkDownload(b *testing.B) {
	c, s := newBenchClient(b, 1<<20, 1)
	dir := b.TempDir()
	rf := wire.ResultFile{Name: "x", MD5: s.md5, Size: int64(len(s.body)), Path: wire.PathFiles + "/g/x"}
	b.SetBytes(int64(len(s.body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Download(context.Background(), rf, filepath.Join(dir, fmt.Sprint("f", i%8)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutFile: one input upload (1 MB), streamed from the file.
func BenchmarkPutFile(b *testing.B) {
	c, s := newBenchClient(b, 1<<20, 0)
	p := filepath.Join(b.TempDir(), "in")
	os.WriteFile(p, s.body, 0o644)
	b.SetBytes(int64(len(s.body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.PutFile(context.Background(), "/DAV/u/up1/", s.md5, p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetrieve: a whole retrieval of many small result files (100 kB
// each): listing, parallel downloads, acknowledgement.
func BenchmarkRetrieve(b *testing.B) {
	n := benchShort(1000, 50)
	c, s := newBenchClient(b, 100000, n)
	b.SetBytes(int64(n * len(s.body)))
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "r")
		rep, err := c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir})
		if err != nil || rep.Retrieved != n {
			b.Fatalf("retrieved %d of %d: %v", rep.Retrieved, n, err)
		}
	}
	b.ReportMetric(float64(n), "files/op")
}
