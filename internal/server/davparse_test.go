package server

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/webdav"
)

// FuzzDAVXML: the checks of WebDAV XML bodies and headers never panic, a
// body is left whole for the library, and an empty prefix declaration is
// always refused.
func FuzzDAVXML(f *testing.F) {
	f.Add(`<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>`, "Second-60")
	f.Add(`<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>x</D:owner></D:lockinfo>`, "Infinite, Second-4100000000")
	f.Add(`<a xmlns:b="c"><b:d/></a>`, "Second-")
	// Refused: an owner past maxLockOwner, a body past maxLockBody; a
	// timeout past maxLockDuration is granted as that.
	f.Add(`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>`+strings.Repeat("<D:href>x</D:href>", 300)+`</D:owner></D:lockinfo>`, "Infinite")
	f.Add(`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>`, "Second-3601")
	f.Add(`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>`+strings.Repeat("x", maxLockBody)+`</D:owner></D:lockinfo>`, "Second-4294967295")
	f.Add(`<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`, "Infinite, Second-1")
	f.Fuzz(func(t *testing.T, body, timeout string) {
		r, _ := http.NewRequest("PROPFIND", "http://x/", strings.NewReader(body))
		err := checkDAVXML(r, maxDAVBody)
		if strings.Contains(body, `xmlns:bar=""`) && strings.HasPrefix(body, `<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/>`) && err == nil {
			t.Fatalf("an empty prefix declaration passed: %q", body)
		}
		var back bytes.Buffer
		back.ReadFrom(r.Body)
		if len(body) <= maxDAVBody && back.String() != body {
			t.Fatalf("the body was changed")
		}
		r2, _ := http.NewRequest("LOCK", "http://x/", strings.NewReader(body))
		err = checkDAVXML(r2, maxLockBody)
		if len(body) > maxLockBody && !errors.Is(err, errDAVBodyTooLarge) {
			t.Fatalf("a LOCK body of %d bytes passed: %v", len(body), err)
		}
		if err == nil {
			if empty, li, err := lockBody(r2); err == nil && !empty && checkLockInfo(li) == nil && len(li.Owner.InnerXML) > maxLockOwner {
				t.Fatalf("an owner of %d bytes passed", len(li.Owner.InnerXML))
			}
		}
		if d, ok := lockTimeout(timeout); ok {
			if d < -1 {
				t.Fatalf("timeout %q gave %v", timeout, d)
			}
			if g := grantedDuration(d); g < 0 || g > maxLockDuration || d >= 0 && d <= maxLockDuration && g != d {
				t.Fatalf("timeout %q (%v) granted as %v", timeout, d, g)
			}
		}
	})
}

// TestLockManager: shared locks coexist, an exclusive one excludes every
// other on the resource and below, and a list of If conditions holds only
// as a whole (tokens of live locks on the resource, its entity tag, Not).
func TestLockManager(t *testing.T) {
	now := time.Now()
	etag := `"abc"`
	m := newLockManager(func(string) string { return etag })
	s1, err := m.create(now, webdav.LockDetails{Root: "/c/f", Duration: time.Minute, ZeroDepth: true}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := m.create(now, webdav.LockDetails{Root: "/c/f", Duration: -1, ZeroDepth: true}, true, true)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if _, err := m.Create(now, webdav.LockDetails{Root: "/c/f", ZeroDepth: true}); err != webdav.ErrLocked {
		t.Fatalf("an exclusive lock beside shared ones: %v", err)
	}
	if _, err := m.Create(now, webdav.LockDetails{Root: "/c"}); err != webdav.ErrLocked {
		t.Fatalf("a depth-infinity exclusive lock above a shared one: %v", err)
	}
	confirm := func(cs ...ifCond) int {
		h := ifHeader{lists: []ifList{{conds: cs}}}
		return m.check(now, &h, "/c/f", nil, guard{name: "/c/f"})
	}
	for _, tc := range []struct {
		cs   []ifCond
		want int
	}{
		{[]ifCond{{token: s1}}, 0},
		{[]ifCond{{token: s2}, {etag: `"abc"`}}, 0},
		{[]ifCond{{token: s2}, {etag: `"abd"`}}, 412},
		{[]ifCond{{token: s1 + "x"}}, 412},
		{[]ifCond{{token: "DAV:no-lock", not: true}}, 423}, // holds, but no token for the locks
		{[]ifCond{{token: s1}, {token: "DAV:no-lock", not: true}}, 0},
		{[]ifCond{{token: s1}, {etag: `"abc"`, not: true}}, 412},
	} {
		if got := confirm(tc.cs...); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.cs, got, tc.want)
		}
	}
	if err := m.Unlock(now, s1); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(now, s1); err != webdav.ErrNoSuchLock {
		t.Fatalf("unlocking twice: %v", err)
	}
	// The minute-long lock is gone an hour later; the infinite one stays.
	if _, err := m.Refresh(now.Add(time.Hour), s2, time.Second); err != nil {
		t.Fatalf("refreshing an infinite lock: %v", err)
	}
	if _, err := m.Refresh(now.Add(2*time.Hour), s2, time.Second); err != webdav.ErrNoSuchLock {
		t.Fatalf("a lock past its timeout: %v", err)
	}
	if _, err := m.Create(now.Add(2*time.Hour), webdav.LockDetails{Root: "/c"}); err != nil {
		t.Fatalf("exclusive lock once the others are gone: %v", err)
	}
}

// FuzzContentRange: an accepted Content-Range describes a piece that runs
// from a start inside the content to its end, of the length sent.
func FuzzContentRange(f *testing.F) {
	f.Add("bytes 0-9/10", int64(10))
	f.Add("bytes 4-9/10", int64(6))
	f.Add("bytes 9-8/10", int64(0))
	f.Add("", int64(-1))
	f.Fuzz(func(t *testing.T, h string, n int64) {
		start, total, ok := parseContentRange(h, n)
		if !ok {
			return
		}
		if start < 0 || total < start || (h != "" && (start >= total || n >= 0 && n != total-start)) || (h == "" && (start != 0 || total != n)) {
			t.Fatalf("%q with length %d gave start %d, total %d", h, n, start, total)
		}
	})
}
