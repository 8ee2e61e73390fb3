package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// heapMB is the live heap after a collection, in MiB.
func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

func lockInfoOwner(scope, owner string) string {
	return `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:` + scope +
		`/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>` + owner + `</D:owner></D:lockinfo>`
}

// TestDAVLockAttackBounded: the attack of issue 26 (150 shared locks with
// Timeout: Infinite and 900 KB owners) is refused, and locks with small
// owners stop at max_dav_locks: the heap stays as it was. No lock is
// granted for longer than an hour, also when refreshed.
func TestDAVLockAttackBounded(t *testing.T) {
	v := newEnv(t)
	v.mustStatus(201, "PUT", davA+"f", "x")
	before := heapMB()

	big := lockInfoOwner("shared", "<D:href>"+strings.Repeat("o", 900<<10)+"</D:href>")
	for i := range 150 {
		a := v.call("alice", "LOCK", davA+"f", strings.NewReader(big), "Timeout", "Infinite", "Depth", "0")
		if i == 0 {
			refusedClearly(t, "900 KB owner", a, 413, "LOCK body may have at most")
		} else if a.status != 413 {
			t.Fatalf("900 KB owner, lock %d: %v", i, a)
		}
	}
	// An owner past 4 KiB in a body the server reads: refused by its size.
	a := v.call("alice", "LOCK", davA+"f", strings.NewReader(lockInfoOwner("shared", strings.Repeat("o", 5000))), "Timeout", "Infinite")
	refusedClearly(t, "5000-byte owner", a, 400, "owner is 5", "at most 4096")

	owner := strings.Repeat("o", 4000)
	var tokens []string
	for i := range 150 {
		a := v.call("alice", "LOCK", davA+"f", strings.NewReader(lockInfoOwner("shared", owner)), "Timeout", "Infinite", "Depth", "0")
		if i < 100 {
			if a.status != 200 || !strings.Contains(a.body, "<D:timeout>Second-3600</D:timeout>") {
				t.Fatalf("lock %d: %v", i, a)
			}
			tokens = append(tokens, strings.Trim(a.hdr.Get("Lock-Token"), "<>"))
			continue
		}
		if i == 100 {
			refusedClearly(t, "the 101st lock", a, 403, "100 WebDAV locks", "max_dav_locks")
			if a.err.Code != wire.CodeQuotaExceeded {
				t.Errorf("code %q", a.err.Code)
			}
		} else if a.status != 403 {
			t.Fatalf("lock %d: %v", i, a)
		}
	}
	after := heapMB()
	t.Logf("heap before the lock attack %.1f MiB, after %.1f MiB", before, after)
	if after-before > 8 {
		t.Errorf("the lock attack grew the heap from %.1f to %.1f MiB", before, after)
	}

	// A refresh asking for Infinite or for days is granted an hour.
	for _, tmo := range []string{"Infinite", "Second-4100000000", "Infinite, Second-60"} {
		a := v.mustStatus(200, "LOCK", davA+"f", "", "If", "(<"+tokens[0]+">)", "Timeout", tmo)
		if !strings.Contains(a.body, "<D:timeout>Second-3600</D:timeout>") {
			t.Fatalf("refresh with %s: %v", tmo, a)
		}
	}
	a = v.mustStatus(200, "LOCK", davA+"f", "", "If", "(<"+tokens[0]+">)", "Timeout", "Second-60")
	if !strings.Contains(a.body, "<D:timeout>Second-60</D:timeout>") {
		t.Fatalf("refresh with a minute: %v", a)
	}
	// Unlocking one leaves room for one more; bob has his own count.
	v.mustStatus(204, "UNLOCK", davA+"f", "", "Lock-Token", "<"+tokens[1]+">")
	v.mustStatus(200, "LOCK", davA+"f", lockInfoOwner("shared", "me"), "Timeout", "Infinite", "Depth", "0")
	v.mustStatus(403, "LOCK", davA+"f", lockInfoOwner("shared", "me"), "Timeout", "Infinite", "Depth", "0")
	if a := v.call("bob", "PUT", "/DAV/bob/f", strings.NewReader("x")); a.status != 201 {
		t.Fatal(a)
	}
	if a := v.call("bob", "LOCK", "/DAV/bob/f", strings.NewReader(lockInfoOwner("exclusive", "bob")), "Timeout", "Infinite"); a.status != 200 || !strings.Contains(a.body, "Second-3600") {
		t.Fatalf("bob's exclusive lock: %v", a)
	}
	// Expired locks no longer count.
	v.e.Cfg.MaxDAVLocks = 101
	v.mustStatus(200, "LOCK", davA+"f", lockInfoOwner("shared", "me"), "Timeout", "Second-1", "Depth", "0")
	v.mustStatus(403, "LOCK", davA+"f", lockInfoOwner("shared", "me"), "Timeout", "Second-1", "Depth", "0")
	time.Sleep(1100 * time.Millisecond)
	v.mustStatus(200, "LOCK", davA+"f", lockInfoOwner("shared", "me"), "Timeout", "Second-1", "Depth", "0")
}

// TestDAVExclusiveLockBounded: an exclusive lock (which the WebDAV library
// would grant as asked) gets the same bounds.
func TestDAVExclusiveLockBounded(t *testing.T) {
	v := newEnv(t)
	a := v.mustStatus(201, "LOCK", davA+"new", lockInfoOwner("exclusive", "me"), "Timeout", "Infinite")
	if !strings.Contains(a.body, "<D:timeout>Second-3600</D:timeout>") || !strings.Contains(a.body, "<D:exclusive/>") {
		t.Fatalf("exclusive lock: %v", a)
	}
	a = v.call("alice", "LOCK", davA+"g", strings.NewReader(lockInfoOwner("exclusive", strings.Repeat("o", 5000))), "Timeout", "Second-10")
	refusedClearly(t, "exclusive lock, 5000-byte owner", a, 400, "at most 4096")
	a = v.call("alice", "LOCK", davA+"g", strings.NewReader(`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>`))
	refusedClearly(t, "two scopes", a, 400, "one of exclusive and shared")
	a = v.call("alice", "LOCK", davA+"g", strings.NewReader(`<D:lockinfo xmlns:D="DAV:"><D:lockscope>`))
	refusedClearly(t, "malformed lockinfo", a, 400, "not a DAV:lockinfo")
	if _, err := os.Stat(filepath.Join(v.e.DAVRoot(store0("alice")), "g")); err == nil {
		t.Fatal("a refused LOCK made its resource")
	}
}

// TestPropfindInfiniteDepthRefused: PROPFIND of Depth infinity (or none,
// which means infinity) is refused at once as RFC 4918 allows, also on a
// tree 400 collections deep (made before the depth bound); new
// collections nest at most 32 deep, by MKCOL, PUT, COPY or MOVE.
func TestPropfindInfiniteDepthRefused(t *testing.T) {
	v := newEnv(t)
	area := v.e.DAVRoot(store0("alice"))
	deep := filepath.Join(append([]string{area}, strings.Split(strings.Repeat("d/", 400), "/")...)...)
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, depth := range []string{"infinity", ""} {
		hdr := []string{"Depth", depth}
		if depth == "" {
			hdr = nil
		}
		t0 := time.Now()
		a := v.call("alice", "PROPFIND", davA, strings.NewReader(`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`), hdr...)
		took := time.Since(t0)
		if a.status != 403 || !strings.Contains(a.body, `<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`) {
			t.Fatalf("PROPFIND Depth %q: %v", depth, a)
		}
		if took > time.Second {
			t.Errorf("PROPFIND Depth %q took %v to refuse", depth, took)
		}
	}
	// 64 at once (a user's requests in flight) are as quick.
	t0 := time.Now()
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if a := v.call("alice", "PROPFIND", davA+"d/", nil, "Depth", "infinity"); a.status != 403 {
				t.Errorf("PROPFIND: %v", a)
			}
		})
	}
	wg.Wait()
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("64 refusals took %v", took)
	}
	v.mustStatus(207, "PROPFIND", davA+"d/", "", "Depth", "1")
	v.mustStatus(207, "PROPFIND", davA+"d/", "", "Depth", "0")
	v.mustStatus(400, "PROPFIND", davA+"d/", "", "Depth", "2")
	v.mustStatus(204, "DELETE", davA+"d/", "")

	// 32 levels of collections; not 33.
	p := davA
	for i := range 32 {
		p += fmt.Sprintf("l%d/", i)
		v.mustStatus(201, "MKCOL", p, "")
	}
	a := v.call("alice", "MKCOL", p+"l32/", nil)
	refusedClearly(t, "33rd level", a, 403, "33 levels deep", "at most 32")
	v.mustStatus(403, "PUT", p+"f", "x")
	// A tree two levels high moved or copied below level 31 would pass 32.
	v.mustStatus(201, "MKCOL", davA+"t/", "")
	v.mustStatus(201, "MKCOL", davA+"t/u/", "")
	v.mustStatus(201, "PUT", davA+"t/u/f", "x")
	at31 := davA
	for i := range 30 {
		at31 += fmt.Sprintf("l%d/", i)
	}
	a = v.call("alice", "MOVE", davA+"t/", nil, "Destination", at31+"t/")
	refusedClearly(t, "MOVE below level 30", a, 403, "at least 33 levels", "at most 32")
	v.mustStatus(403, "COPY", davA+"t/", "", "Destination", at31+"t/")
	// One level higher it fits.
	v.mustStatus(201, "MOVE", davA+"t/", "", "Destination", strings.TrimSuffix(at31, "l29/")+"t/")

	// A collection copied into itself (which the WebDAV library did level
	// after level, 1,000 deep, for minutes) or moved into itself.
	v.mustStatus(201, "MKCOL", davA+"x/", "")
	t0 = time.Now()
	a = v.call("alice", "COPY", davA+"x/", nil, "Destination", davA+"x/y/")
	refusedClearly(t, "COPY into itself", a, 403, "inside x/")
	v.mustStatus(403, "MOVE", davA+"x/", "", "Destination", davA+"x/y/z/")
	if took := time.Since(t0); took > time.Second {
		t.Errorf("refusing a collection copied into itself took %v", took)
	}
	if got := tree(filepath.Join(area, "x")); len(got) != 1 {
		t.Errorf("refused requests left %v", got)
	}
}

// TestOpenUploadsCapped: of 400 upload collections asked for, the first
// 100 (max_open_uploads) are opened and the 300 after them refused (2,000
// asked for took minutes under -race and proved no more); discarding one
// makes room; the top of the WebDAV area (where the original clients
// MKCOL theirs) is held to the same number, also by requests made at once.
func TestOpenUploadsCapped(t *testing.T) {
	v := newEnv(t)
	var ids []string
	t0 := time.Now()
	for i := range 400 {
		a := v.post("alice", server.Base+wire.PathUploads, nil)
		if i < 100 {
			if !a.ok() {
				t.Fatalf("upload %d: %v", i, a)
			}
			var up wire.UploadResponse
			if err := json.Unmarshal([]byte(a.body), &up); err != nil || up.ID == "" {
				t.Fatalf("upload %d: %v (%v)", i, a, err)
			}
			ids = append(ids, up.ID)
			continue
		}
		if i == 100 {
			refusedClearly(t, "the 101st upload", a, 403, "100 upload collections open", "max_open_uploads")
			if a.err.Code != wire.CodeQuotaExceeded {
				t.Errorf("code %q", a.err.Code)
			}
		} else if a.status != 403 {
			t.Fatalf("upload %d: %v", i, a)
		}
	}
	t.Logf("400 upload requests in %v", time.Since(t0))
	area := v.e.DAVRoot(store0("alice"))
	if ents, _ := os.ReadDir(area); len(ents) != 100 {
		t.Fatalf("%d collections in the area, want 100", len(ents))
	}
	// Bob has his own.
	if a := v.post("bob", server.Base+wire.PathUploads, nil); !a.ok() {
		t.Fatalf("bob: %v", a)
	}
	// The top of the area is full: no MKCOL, PUT or COPY there; inside a
	// collection, and over an existing entry, as before.
	a := v.call("alice", "MKCOL", davA+"mine/", nil)
	refusedClearly(t, "MKCOL at a full top", a, 403, "100 collections and files at its top", "max_open_uploads")
	v.mustStatus(403, "PUT", davA+"top-file", "x")
	v.mustStatus(403, "COPY", davA+ids[0]+"/", "", "Destination", davA+"copy/")
	v.mustStatus(201, "MKCOL", davA+ids[0]+"/sub/", "")
	v.mustStatus(201, "MOVE", davA+ids[0]+"/", "", "Destination", davA+"renamed/")
	v.mustStatus(201, "MOVE", davA+"renamed/", "", "Destination", davA+ids[0]+"/")

	if a := v.call("alice", "DELETE", server.Base+wire.PathUploads+"/"+ids[1], nil); !a.ok() {
		t.Fatal(a)
	}
	if a := v.post("alice", server.Base+wire.PathUploads, nil); !a.ok() {
		t.Fatalf("after discarding one: %v", a)
	}

	// Requests made at once: exactly the cap is made.
	v.e.Cfg.MaxOpenUploads = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	made := 0
	for i := range 40 {
		wg.Go(func() {
			if a := v.call("bob", "MKCOL", fmt.Sprintf("/DAV/bob/c%d/", i), nil); a.status == 201 {
				mu.Lock()
				made++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ents, _ := os.ReadDir(v.e.DAVRoot(store0("bob"))); made != 9 || len(ents) != 10 {
		t.Fatalf("bob made %d collections at once beside his upload, and holds %d; want 9 and 10", made, len(ents))
	}
}

// TestUntouchedUploadsExpire: collection removes an upload collection
// (with its partial contents) untouched for a day, keeps one older than a
// day still being written to, and keeps what the user made by MKCOL.
func TestUntouchedUploadsExpire(t *testing.T) {
	v := newEnv(t)
	ctx := t.Context()
	content := strings.Repeat("z", 100)
	sum := md5of(content)
	var dirs []string
	var ids []string
	for range 2 {
		up := v.newUpload("alice")
		a := v.call("alice", "PUT", server.Base+wire.PathUploads+"/"+up.ID+"/"+sum, chunked{strings.NewReader(content[:10])}, "Content-Range", "bytes 0-99/100") // cut short
		if a.status != 200 {
			t.Fatalf("first piece: %v", a)
		}
		ids = append(ids, up.ID)
		dirs = append(dirs, filepath.Join(v.e.DAVRoot(store0("alice")), up.ID))
	}
	v.mustStatus(201, "MKCOL", davA+"kept/", "")
	old := time.Now().Add(-25 * time.Hour)
	if _, err := v.db.SQL().ExecContext(ctx, `UPDATE uploads SET created = ?`, old.Unix()); err != nil {
		t.Fatal(err)
	}
	// The first is untouched since; the second got a piece just now.
	filepath.WalkDir(dirs[0], func(p string, _ os.DirEntry, _ error) error { return os.Chtimes(p, old, old) })
	kept := filepath.Join(v.e.DAVRoot(store0("alice")), "kept")
	os.Chtimes(kept, old, old)
	if _, err := v.e.Collect(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the untouched upload is still there: %v", err)
	}
	if a := v.call("alice", "HEAD", server.Base+wire.PathUploads+"/"+ids[0]+"/"+sum, nil); a.status != 404 {
		t.Errorf("the untouched upload still answers: %v", a)
	}
	if fi, err := os.Stat(filepath.Join(dirs[1], ".part-"+sum)); err != nil || fi.Size() != 10 {
		t.Errorf("the upload being written lost its partial content: %v", tree(dirs[1]))
	}
	if a := v.call("alice", "PUT", server.Base+wire.PathUploads+"/"+ids[1]+"/"+sum, strings.NewReader(content[10:]), "Content-Range", "bytes 10-99/100"); a.status != 201 {
		t.Errorf("finishing the upload being written: %v", a)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the user's own collection was removed: %v", err)
	}
}

// TestScratchQuotaChargesEntries: every file and collection counts at
// least 4 KiB, so a user making 100,000 empty collections is stopped once
// they pass the quota (4 MiB here: 1,024 entries), and 1-byte files
// likewise.
func TestScratchQuotaChargesEntries(t *testing.T) {
	v := newEnv(t)
	v.e.Cfg.MaxScratchBytes = 4 << 20
	v.mustStatus(201, "MKCOL", davA+"e/", "")
	t0 := time.Now()
	made := 1
	for i := range 100000 {
		a := v.call("alice", "MKCOL", fmt.Sprintf("%se/%d/", davA, i), nil)
		if a.status == 201 {
			made++
			if made > 1024 {
				t.Fatalf("%d empty collections made under a 4 MiB quota", made)
			}
			continue
		}
		refusedClearly(t, "a collection past the quota", a, 403, "at least 4096", "4194304")
		if a.err.Code != wire.CodeQuotaExceeded {
			t.Errorf("code %q", a.err.Code)
		}
		break
	}
	t.Logf("%d collections made, then refused, in %v", made, time.Since(t0))
	if made != 1024 {
		t.Fatalf("%d collections made, want 1024 (4 MiB of 4 KiB each)", made)
	}
	// A LOCK making a resource is refused too.
	v.mustStatus(403, "LOCK", davA+"e/lockednull", lockInfoOwner("exclusive", "me"))

	// 1-byte files: a collection and 9 files fit in 40 KiB, the 10th not.
	v.mustStatus(204, "DELETE", davA+"e/", "")
	v.e.Cfg.MaxScratchBytes = 10 * 4096
	v.mustStatus(201, "MKCOL", davA+"f/", "")
	for i := range 9 {
		v.mustStatus(201, "PUT", fmt.Sprintf("%sf/%d", davA, i), "x")
	}
	a := v.call("alice", "PUT", davA+"f/9", strings.NewReader("x"))
	refusedClearly(t, "the 10th 1-byte file", a, 413, "40960")
	// Measured again from the disk (not the running count), the same.
	v.mustStatus(204, "DELETE", davA+"f/0", "")
	v.mustStatus(201, "PUT", davA+"f/9", "x")
	v.mustStatus(413, "PUT", davA+"f/10", "x")
}

// TestPropfindWideListingRefused: a PROPFIND of Depth 1 lists at most
// 10,000 members (100,000 took 47 MiB and 20 s of the server's CPU);
// past that it is refused at once, and Depth 0 still answers.
func TestPropfindWideListingRefused(t *testing.T) {
	v := newEnv(t)
	dir := filepath.Join(v.e.DAVRoot(store0("alice")), "w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 10001 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	a := v.call("alice", "PROPFIND", davA+"w/", nil, "Depth", "1")
	refusedClearly(t, "10,001 members", a, 403, "more than 10000 members", "Depth 0")
	if took := time.Since(t0); took > time.Second {
		t.Errorf("refusing took %v", took)
	}
	v.mustStatus(207, "PROPFIND", davA+"w/", "", "Depth", "0")
	os.Remove(filepath.Join(dir, "0"))
	if a := v.mustStatus(207, "PROPFIND", davA+"w/", "", "Depth", "1"); strings.Count(a.body, "<D:response>") != 10001 {
		t.Errorf("a listing of 10,000 members and the collection has %d responses", strings.Count(a.body, "<D:response>"))
	}
}
