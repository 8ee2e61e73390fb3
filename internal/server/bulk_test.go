package server_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/workflow/wire"
)

const bulkPath = "/rboinc_cgi/api/v1/files/bulk"

// finishDistinct is finish with outputs whose contents differ from work
// unit to work unit (finish writes the same three everywhere).
func (v *env) finishDistinct(wu string) {
	v.t.Helper()
	var paths []string
	for k := range 3 {
		p := v.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("output %d of %s\n%s", k, wu, strings.Repeat("x", k*1000))), 0o644)
		paths = append(paths, p)
	}
	if err := v.hookCall(boinc.HookCall{WUName: wu, Files: paths}); err != nil {
		v.t.Fatal(err)
	}
}

// finishedGroup makes n one-step chains of user's in group, finished.
func (v *env) finishedGroup(user, group string, n int) []wire.ResultFile {
	v.t.Helper()
	for i := range n {
		r := v.submit(user, group, fmt.Sprintf("c%03d", i), 1)
		v.finishDistinct(r.Chains[0].FirstWU)
	}
	return v.results(user, group)
}

func (v *env) results(user, group string) []wire.ResultFile {
	v.t.Helper()
	a := v.call(user, "GET", "/rboinc_cgi/api/v1/results?group="+group, nil)
	var res wire.ResultsResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &res) != nil {
		v.t.Fatalf("results of %s/%s: %v", user, group, a)
	}
	return res.Files
}

type bulkEntry struct {
	name, md5 string
	size      int64
	body      string
}

// untar reads a bulk answer whole, failing on any damage.
func untar(t *testing.T, body string) []bulkEntry {
	t.Helper()
	var out []bulkEntry
	tr := tar.NewReader(strings.NewReader(body))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("bulk answer: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("bulk answer: %v", err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Fatalf("entry %s of type %c", h.Name, h.Typeflag)
		}
		out = append(out, bulkEntry{name: h.Name, md5: h.PAXRecords[wire.BulkMD5Record], size: h.Size, body: string(b)})
	}
}

func names(files []wire.ResultFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

// checkEntries: the answer holds exactly want, in order, each with the
// listing's size and MD5 and bytes of that MD5.
func checkEntries(t *testing.T, got []bulkEntry, want []wire.ResultFile) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for k, e := range got {
		w := want[k]
		if e.name != w.Name || e.size != w.Size || e.md5 != w.MD5 || md5of(e.body) != w.MD5 {
			t.Errorf("entry %d: %s %d %s (content %s), want %s %d %s", k, e.name, e.size, e.md5, md5of(e.body), w.Name, w.Size, w.MD5)
		}
	}
}

func TestBulkSendsTheCallersFiles(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 4)
	if len(files) != 12 {
		t.Fatalf("%d results, want 12", len(files))
	}
	a := v.post("alice", bulkPath, wire.BulkRequest{Group: "g", Files: names(files)})
	if a.status != 200 || a.hdr.Get("Content-Type") != wire.BulkContentType {
		t.Fatalf("bulk: %d %s", a.status, a.hdr.Get("Content-Type"))
	}
	checkEntries(t, untar(t, a.body), files)

	// A subset, in the order asked, a name twice sent once.
	sub := []wire.ResultFile{files[5], files[1], files[5]}
	a = v.post("alice", bulkPath, wire.BulkRequest{Group: "g", Files: names(sub)})
	checkEntries(t, untar(t, a.body), sub[:2])

	// No list: the next waiting files, of the group or of one chain.
	a = v.post("alice", bulkPath, `{"group":"g"}`)
	checkEntries(t, untar(t, a.body), files)
	a = v.post("alice", bulkPath, `{"group":"g","name":"c002"}`)
	checkEntries(t, untar(t, a.body), files[6:9])

	// An empty list: an empty archive.
	a = v.post("alice", bulkPath, `{"group":"g","files":[]}`)
	if a.status != 200 || len(untar(t, a.body)) != 0 {
		t.Fatalf("empty list: %v", a)
	}
	// Sending acknowledges nothing.
	if got := v.results("alice", "g"); len(got) != 12 {
		t.Fatalf("%d results left after bulk downloads, want 12", len(got))
	}
}

// Another user's file names, in that user's group or in one of the
// caller's own of the same name, bring nothing, and the answer is the one
// for names of no file at all: nothing tells them apart.
func TestBulkOthersFilesAreAbsent(t *testing.T) {
	v := newEnv(t)
	alice := v.finishedGroup("alice", "g", 2)
	bob := v.finishedGroup("bob", "g", 1)
	ghost := []string{strings.Replace(alice[0].Name, "_0", "_7", 1), "nosuchwu_0"}
	for _, group := range []string{"g", "h"} {
		a := v.post("bob", bulkPath, wire.BulkRequest{Group: group, Files: names(alice)})
		b := v.post("bob", bulkPath, wire.BulkRequest{Group: group, Files: ghost})
		if n := len(untar(t, a.body)); a.status != 200 || n != 0 || a.body != b.body || a.status != b.status {
			t.Fatalf("bob asking for alice's files in his group %s: %d, %d files; for no files: %d, the same answer: %v", group, a.status, n, b.status, a.body == b.body)
		}
	}
	// Mixed with his own: only his.
	a := v.post("bob", bulkPath, wire.BulkRequest{Group: "g", Files: append(names(alice), names(bob)...)})
	checkEntries(t, untar(t, a.body), bob)
	// The next waiting files of a group are the caller's only.
	a = v.post("bob", bulkPath, `{"group":"g"}`)
	checkEntries(t, untar(t, a.body), bob)
	// Nobody's credentials: nothing.
	if a := v.post("", bulkPath, wire.BulkRequest{Group: "g", Files: names(alice)}); a.status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %v", a)
	}
	if got := v.results("alice", "g"); len(got) != len(alice) {
		t.Fatalf("alice has %d results left, want %d", len(got), len(alice))
	}
}

func TestBulkBounds(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 1)
	many := make([]string, wire.MaxBulkFiles+1)
	for k := range many {
		many[k] = fmt.Sprintf("wu%d_0", k)
	}
	huge := `{"group":"g","files":["` + strings.Repeat("a", 1<<20) + `_0"]}`
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"group":"g","files":` + mustJSON(many) + `}`, http.StatusRequestEntityTooLarge},
		{huge, http.StatusRequestEntityTooLarge},
		{``, http.StatusBadRequest},
		{`[]`, http.StatusBadRequest},
		{`{"group":"g","files":"x_0"}`, http.StatusBadRequest},
		{`{"group":"g","files":[1]}`, http.StatusBadRequest},
		{`{"group":"g","files":["a_0"],"user":"bob"}`, http.StatusBadRequest},
		{`{"group":"g","files":["a_0"]} {}`, http.StatusBadRequest},
		{`{"group":"g","files":["../../etc/passwd"]}`, http.StatusBadRequest},
		{`{"group":"g","files":["a/b_0"]}`, http.StatusBadRequest},
		{`{"group":"../g","files":[]}`, http.StatusBadRequest},
		{`{"files":[]}`, http.StatusBadRequest},
		{`{"group":"g","name":"c000","files":[]}`, http.StatusBadRequest},
		{`{"group":"g","consumer":"batch"}`, http.StatusBadRequest},
		{`{"group":"g","consumer":"master"}`, http.StatusConflict},
	} {
		a := v.post("alice", bulkPath, c.body)
		if a.status != c.status || a.err.Error == "" {
			t.Errorf("%.80s: %v, want %d with an error", c.body, a, c.status)
		}
	}
	if a := v.call("alice", "GET", bulkPath, nil); a.status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v", a)
	}
	// The limit itself is taken.
	ok := append(many[:wire.MaxBulkFiles-1], files[0].Name)
	a := v.post("alice", bulkPath, wire.BulkRequest{Group: "g", Files: ok})
	checkEntries(t, untar(t, a.body), files[:1])
}

// A file whose size on disk is not the recorded one is left out (the
// client fetches it alone and is told what is wrong), and the files after
// it still come.
func TestBulkLeavesOutAFileNotAsRecorded(t *testing.T) {
	v := newEnv(t)
	files := v.finishedGroup("alice", "g", 2)
	big := files[1]
	p := filepath.Join(v.e.Root, "results", "ALICE_g", big.Name)
	if err := os.Truncate(p, wire.MaxBulkBytes+1); err != nil {
		t.Fatal(err)
	}
	a := v.post("alice", bulkPath, wire.BulkRequest{Group: "g", Files: names(files)})
	want := append(append([]wire.ResultFile{}, files[:1]...), files[2:]...)
	checkEntries(t, untar(t, a.body), want)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(bytes.TrimSpace(b))
}
