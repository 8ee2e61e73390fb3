package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rboinc/rboinc/internal/hookargs"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// tmpfsRoot mounts a small tmpfs for a server root, or skips the test
// where mounting is not allowed (not root).
func tmpfsRoot(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs for a server root whose disk fills up (%v): the full-disk tests need root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill leaves about room bytes free on dir's file system, with one file
// whose removal frees the rest.
func fill(t *testing.T, dir string, room int64) (free func()) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * st.Bsize
	f, err := os.CreateTemp(dir, "filler")
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for left := avail - room; left > 0; left -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			break
		}
	}
	f.Close()
	return func() { os.Remove(f.Name()) }
}

// poolContents lists the contents in the pool directory, and any
// temporary file left there.
func poolContents(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return out
}

// TestFullDiskDuringSubmission: a submission that runs out of disk space
// answers 507 saying so, leaves nothing in the pool, records no chain; once
// space is freed the same submission goes through, with no restart.
func TestFullDiskDuringSubmission(t *testing.T) {
	root := tmpfsRoot(t, "96m")
	v := newEnvAt(t, root)
	v.submit("alice", "warm", "c", 1) // the database and directories exist
	before := poolContents(t, v.e.Pool.Dir)

	// 24 contents of 600 KiB each, with about 4 MiB free.
	req := wire.SubmitRequest{Queue: "langevin", Group: "g", Options: wire.Options{NumSteps: 2}}
	var contents []string
	vel := "0.5 0 0\n"
	contents = append(contents, vel)
	for i := range 24 {
		c := fmt.Sprintf("%d", i) + strings.Repeat(" 1.0", 600<<10/4)
		contents = append(contents, c)
		req.Chains = append(req.Chains, wire.ChainSpec{Name: fmt.Sprint("c", i), Files: map[string]wire.FileRef{
			"coor_file": {MD5: md5of(c), Size: int64(len(c))}, "vel_file": {MD5: md5of(vel), Size: int64(len(vel))}}})
	}
	free := fill(t, root, 4<<20)
	a := v.call("alice", "POST", api+"/submit/inline", inlineBody(t, req, contents...))
	if a.status != 507 || a.err.Code != wire.CodeNoSpace || !strings.Contains(a.err.Error, "disk is full") {
		t.Fatalf("submission on a full disk: %v, want 507 %s saying the disk is full", a, wire.CodeNoSpace)
	}
	if after := poolContents(t, v.e.Pool.Dir); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("the failed submission left files in the pool:\nbefore %v\nafter  %v", before, after)
	}
	if st := v.call("alice", "GET", api+"/status?group=g", nil); st.status != 404 {
		t.Errorf("chains of the failed submission: %v", st)
	}

	// The disk frees up: the same request goes through.
	free()
	a = v.call("alice", "POST", api+"/submit/inline", inlineBody(t, req, contents...))
	if !a.ok() {
		t.Fatalf("after freeing space: %v", a)
	}
	var resp wire.SubmitResponse
	if json.Unmarshal([]byte(a.body), &resp) != nil || len(resp.Chains) != 24 {
		t.Fatalf("after freeing space: %s", a.body)
	}
	for _, c := range contents {
		if !v.e.Pool.Has(md5of(c)) {
			t.Fatalf("content %s not pooled", md5of(c))
		}
	}
	for _, p := range poolContents(t, v.e.Pool.Dir) {
		if pool.IsTempName(filepath.Base(p)) {
			t.Errorf("temporary file %s left in the pool", p)
		}
	}
}

// TestFullDiskDuringHookSpooling: the hook's hand-over fails with the
// system's "no space left" (the hook then exits non-zero and BOINC calls
// it again), leaves no half-written entry, and works once space is freed.
func TestFullDiskDuringHookSpooling(t *testing.T) {
	root := tmpfsRoot(t, "64m")
	v := newEnvAt(t, root)
	wu := v.submit("alice", "g", "c", 2).Chains[0].FirstWU
	out := filepath.Join(root, "out")
	os.Mkdir(out, 0o755)
	var files []string
	for k := range 3 {
		p := filepath.Join(out, fmt.Sprintf("%s_0_r123_%d", wu, k))
		os.WriteFile(p, []byte("1 2 3\n"), 0o644)
		files = append(files, p)
	}
	call := hookargs.HookCall{WUName: wu, WUID: 7, Files: files}
	free := fill(t, root, 0)
	free2 := fill(t, root, 0) // what the first left of a partial chunk
	_, err := spool.Write(root, call)
	if err == nil || !errorsIsNoSpace(err) {
		t.Fatalf("spooling on a full disk: %v, want no space left", err)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "spool"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".new-") {
			t.Errorf("half-written spool entry %s left behind", e.Name())
		}
	}
	free()
	free2()
	if _, err := spool.Write(root, call); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
}

func errorsIsNoSpace(err error) bool { return strings.Contains(err.Error(), "no space left on device") }

// TestFullDiskDuringUpload: a WebDAV PUT that runs out of disk space is
// answered 507 saying so (not the library's 405), logs nothing half
// written, and works once space is freed.
func TestFullDiskDuringUpload(t *testing.T) {
	root := tmpfsRoot(t, "64m")
	v := newEnvAt(t, root)
	up := v.newUpload("alice")
	body := strings.Repeat("0.5 1.5 2.5\n", 100000) // 1.2 MB
	free := fill(t, root, 200<<10)
	a := v.call("alice", "PUT", up.DAVPath+md5of(body), strings.NewReader(body))
	if a.status != http.StatusInsufficientStorage || a.err.Code != wire.CodeNoSpace || !strings.Contains(a.err.Error, "disk is full") {
		t.Fatalf("PUT on a full disk: %v, want 507 %s", a, wire.CodeNoSpace)
	}
	dir := filepath.Join(v.e.DAVRoot(mustAlice(t, v)), filepath.Base(strings.TrimSuffix(up.DAVPath, "/")))
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the failed upload left %d file(s) in %s", len(ents), dir)
	}
	free()
	if a := v.call("alice", "PUT", up.DAVPath+md5of(body), strings.NewReader(body)); a.status != http.StatusCreated {
		t.Fatalf("PUT after freeing space: %v", a)
	}
}

func mustAlice(t *testing.T, v *env) store.User {
	t.Helper()
	u, err := v.db.UserByName(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	return u
}
