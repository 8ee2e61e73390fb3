package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// A retrieval of more files than one commit batch holds: every file in
// place with its content, no temporary file left, all acknowledged.
func TestRetrieveCommitsInBatches(t *testing.T) {
	n := commitFiles*2 + 7
	body := []byte("result body\n")
	s := &benchServer{body: body, md5: md5hex(body), nFiles: n}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := New(srv.URL+"/rboinc_cgi", "tok")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "r")
	rep, err := c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir})
	if err != nil || rep.Retrieved != n || rep.Acknowledged != n {
		t.Fatalf("report %+v, %v", rep, err)
	}
	ents, _ := os.ReadDir(dir)
	files := 0
	for _, e := range ents {
		switch {
		case e.Name() == LockName:
		case strings.HasPrefix(e.Name(), "."):
			t.Fatalf("temporary file left: %s", e.Name())
		default:
			files++
			if got, _ := os.ReadFile(filepath.Join(dir, e.Name())); !bytes.Equal(got, body) {
				t.Fatalf("%s holds %q", e.Name(), got)
			}
		}
	}
	if files != n {
		t.Fatalf("%d files in place, want %d", files, n)
	}
}

// A file that cannot be renamed into place fails alone and leaves no
// temporary file; the others of its batch are committed.
func TestCommitBatchFailsOneFile(t *testing.T) {
	dir := t.TempDir()
	var batch []pendingFile
	for i, dest := range []string{"a", "gone/b", "c"} {
		tmp := filepath.Join(dir, ".tmp"+dest[len(dest)-1:])
		os.WriteFile(tmp, []byte(dest), 0o644)
		batch = append(batch, pendingFile{i: i, tmp: tmp, dest: filepath.Join(dir, dest), size: 1})
	}
	errs := commitBatch(batch)
	if errs[0] != nil || errs[2] != nil || errs[1] == nil {
		t.Fatalf("errors %v", errs)
	}
	if _, err := os.Stat(batch[1].tmp); !os.IsNotExist(err) {
		t.Fatal("temporary file of the failed rename left")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "c")); string(got) != "c" {
		t.Fatalf("c holds %q", got)
	}
}

func TestDirNamesAgreesWithAlreadyPresent(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"w_0", "w_1.log", "w_2.log.gz.bad", ".hidden"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "w_5"), 0o755)
	d := dirNames{}
	for _, rf := range []wire.ResultFile{
		{Name: "w_0"}, {Name: "w_1", Aliases: []string{".log", ".log.gz"}}, {Name: "w_2", Aliases: []string{".log.gz.bad"}},
		{Name: "w_3", Aliases: []string{".dcd"}}, {Name: "w_5"}, {Name: "w_6"},
	} {
		if got, want := d.present(dir, rf), AlreadyPresent(dir, rf); got != want {
			t.Errorf("%s: listing says %v, stat says %v", rf.Name, got, want)
		}
	}
	if d.present(filepath.Join(dir, "nosuch"), wire.ResultFile{Name: "w_0"}) {
		t.Error("a missing directory holds a file")
	}
}

// The committer holds one batch being committed and at most commitQueue
// downloads waiting: a worker that finds the queue full waits. Errors come
// back by index.
func TestCommitterIsBounded(t *testing.T) {
	release := make(chan struct{})
	var batches []int
	total := commitFiles + commitQueue + commitFiles
	cm := newCommitter(total, func(batch []pendingFile) []error {
		if len(batches) == 0 {
			<-release
		}
		batches = append(batches, len(batch))
		errs := make([]error, len(batch))
		for k, f := range batch {
			if f.i%2 == 1 {
				errs[k] = errors.New("odd")
			}
		}
		return errs
	})
	var added atomic.Int64
	go func() {
		for i := 0; i < total; i++ {
			cm.add(pendingFile{i: i, size: 1})
			added.Add(1)
		}
	}()
	want := int64(commitFiles + commitQueue)
	for deadline := time.Now().Add(5 * time.Second); added.Load() < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if got := added.Load(); got != want {
		t.Fatalf("%d downloads queued while the first batch commits, want %d", got, want)
	}
	close(release)
	for added.Load() < int64(total) {
		time.Sleep(time.Millisecond)
	}
	errs := cm.wait()
	if len(batches) != total/commitFiles || slices.ContainsFunc(batches, func(n int) bool { return n != commitFiles }) {
		t.Fatalf("batches %v", batches)
	}
	for i, err := range errs {
		if (err != nil) != (i%2 == 1) {
			t.Fatalf("download %d: error %v", i, err)
		}
	}
}

// Every file the server is told to drop is already in place, whole, under
// its final name.
func TestRetrieveAcksOnlyFilesInPlace(t *testing.T) {
	n := commitFiles + 3
	body := []byte("the result\n")
	s := &benchServer{body: body, md5: md5hex(body), nFiles: n}
	dir := filepath.Join(t.TempDir(), "r")
	var mu sync.Mutex
	var acked []string
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimPrefix(r.URL.Path, "/rboinc_cgi") != wire.PathAck {
			s.ServeHTTP(w, r)
			return
		}
		var req wire.AckRequest
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		for _, name := range req.Files {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, body) {
				bad = append(bad, name)
			}
		}
		acked = append(acked, req.Files...)
		mu.Unlock()
		json.NewEncoder(w).Encode(wire.CountResponse{Count: len(req.Files)})
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/rboinc_cgi", "tok")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Retrieve(context.Background(), RetrieveInput{Group: "g", Dir: dir})
	if err != nil || rep.Retrieved != n || rep.Acknowledged != n {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if len(acked) != n || len(bad) != 0 {
		t.Fatalf("%d acknowledged, %d of them not in place: %v", len(acked), len(bad), bad)
	}
}
