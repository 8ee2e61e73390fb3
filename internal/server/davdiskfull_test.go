package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// tmpfsScratch mounts a tmpfs (options as for mount -o) over alice's
// scratch area, or skips the test where mounting is not allowed.
func tmpfsScratch(t *testing.T, v *env, opts string) string {
	t.Helper()
	dir := v.e.DAVRoot(mustAlice(t, v))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("cannot mount a tmpfs (%s) over a scratch area (%v): the full-disk WebDAV tests need root", opts, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// entries lists what dir holds, hidden names included.
func entries(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return out
}

func wantFull(t *testing.T, v *env, a answer, what string) {
	t.Helper()
	if a.status != http.StatusInsufficientStorage || a.err.Code != wire.CodeNoSpace || !strings.Contains(a.err.Error, "server's disk is full") {
		t.Fatalf("%s on a full disk: %v, want 507 %s saying the server's disk is full", what, a, wire.CodeNoSpace)
	}
	if !strings.Contains(v.logs.String(), "the server's disk is full") {
		t.Fatalf("%s on a full disk was not logged:\n%s", what, v.logs)
	}
}

// TestDAVFullDisk: on a 2 MiB scratch file system, a PUT of 3 MB is
// answered 507 saying the server's disk is full (not the library's 405),
// logged, with nothing of it left; with the file system's inodes used up,
// MKCOL, COPY and a LOCK that makes a file are answered so too; once space
// is freed they work. (PROPPATCH is not tried: tmpfs keeps properties
// outside its limits.)
func TestDAVFullDisk(t *testing.T) {
	v := newEnv(t)
	dir := tmpfsScratch(t, v, "size=2m,nr_inodes=64")
	v.mustStatus(201, "MKCOL", davA+"c/", "")
	v.mustStatus(201, "PUT", davA+"c/small", "1 2 3\n")

	big := strings.Repeat("0.5 1.5 2.5\n", 250000) // 3 MB
	wantFull(t, v, v.call("alice", "PUT", davA+"c/big", strings.NewReader(big)), "PUT of 3 MB on 2 MiB")
	if got := entries(dir); strings.Join(got, " ") != "/c /c/small" {
		t.Fatalf("after the failed PUT the area holds %v", got)
	}

	// Use up the inodes.
	fill := filepath.Join(dir, "fill")
	os.Mkdir(fill, 0o755)
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(fill, fmt.Sprint(i)))
		if err != nil {
			break
		}
		f.Close()
	}
	before := strings.Join(entries(dir), " ")
	wantFull(t, v, v.call("alice", "MKCOL", davA+"d/", nil), "MKCOL")
	wantFull(t, v, v.call("alice", "COPY", davA+"c/small", nil, "Destination", davA+"c/copy"), "COPY")
	wantFull(t, v, v.call("alice", "LOCK", davA+"c/new", strings.NewReader(lockBody("shared"))), "LOCK of a new name")
	if after := strings.Join(entries(dir), " "); after != before {
		t.Fatalf("the failed writes changed the area:\nbefore %s\nafter  %s", before, after)
	}
	os.RemoveAll(fill)
	v.mustStatus(201, "MKCOL", davA+"d/", "")
	v.mustStatus(201, "COPY", davA+"c/small", "", "Destination", davA+"c/copy")
}

// TestDAVReadOnlyArea: a write the file system refuses for another reason
// (here a read-only scratch file system) is a server failure, 500, logged,
// never the library's 405.
func TestDAVReadOnlyArea(t *testing.T) {
	v := newEnv(t)
	dir := tmpfsScratch(t, v, "size=2m")
	v.mustStatus(201, "MKCOL", davA+"c/", "")
	v.mustStatus(201, "PUT", davA+"c/f", "x")
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount the tmpfs read-only: %v", err)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "c/g", "y"}, {"PUT", "c/f", "y"}, {"MKCOL", "d/", ""}, {"DELETE", "c/f", ""},
	} {
		a := v.call("alice", tc.method, davA+tc.path, strings.NewReader(tc.body))
		if a.status != 500 || !strings.Contains(a.err.Error, "may not write in your scratch area") {
			t.Errorf("%s %s on a read-only area: %v, want 500 saying the server may not write", tc.method, tc.path, a)
		}
		// The file system's error (the area's path) stays in the log.
		if strings.Contains(a.body, dir) || strings.Contains(a.body, "read-only file system") || !strings.Contains(a.body, "(request ") {
			t.Errorf("%s %s on a read-only area answered %s: want no path nor system error, a request id", tc.method, tc.path, a.body)
		}
	}
	if !strings.Contains(v.logs.String(), "writing in a scratch area failed") {
		t.Errorf("the refused writes were not logged:\n%s", v.logs)
	}
}
