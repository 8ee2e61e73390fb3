package server_test

import (
	"regexp"
	"strings"
	"testing"
)

const davA = "/DAV/alice/"

func lockBody(scope string) string {
	return `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:` + scope +
		`/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>me</D:owner></D:lockinfo>`
}

// lock takes a lock and returns its token.
func (v *env) lock(path, scope, depth string) string {
	v.t.Helper()
	a := v.call("alice", "LOCK", path, strings.NewReader(lockBody(scope)), "Depth", depth, "Timeout", "Second-600")
	tok := strings.Trim(a.hdr.Get("Lock-Token"), "<>")
	if !a.ok() || tok == "" || !strings.Contains(a.body, "<D:"+scope+"/>") {
		v.t.Fatalf("LOCK %s (%s, depth %s): %v", path, scope, depth, a)
	}
	return tok
}

// mustStatus sends a request and checks its status.
func (v *env) mustStatus(want int, method, path, body string, hdr ...string) answer {
	v.t.Helper()
	a := v.call("alice", method, path, strings.NewReader(body), hdr...)
	if a.status != want {
		v.t.Fatalf("%s %s %v: %v, want %d", method, path, hdr, a, want)
	}
	return a
}

// TestDAVIfHeaderAndLocks: the If header is evaluated whole (a list holds
// about its own resource, any list holding is enough) and separately every
// resource a request changes must have its lock's token submitted, also
// when a list about another resource holds, for members of a collection
// deleted or moved, and for a new member of a depth-0-locked collection.
func TestDAVIfHeaderAndLocks(t *testing.T) {
	v := newEnv(t)
	v.mustStatus(201, "MKCOL", davA+"w/", "")
	v.mustStatus(201, "PUT", davA+"w/f", "one")
	v.mustStatus(201, "PUT", davA+"w/g", "two")
	tf := v.lock(davA+"w/f", "exclusive", "0")

	v.mustStatus(423, "PUT", davA+"w/f", "x")
	// A list about another, unlocked resource holds; it gives no right to
	// change the locked one.
	v.mustStatus(423, "PUT", davA+"w/f", "x", "If", "<"+v.srv.URL+davA+"w/g> (Not <DAV:no-lock>)")
	v.mustStatus(423, "PUT", davA+"w/f", "x", "If", "(Not <DAV:no-lock>)")
	v.mustStatus(412, "PUT", davA+"w/f", "x", "If", "(<"+tf+"> [\"bogus\"])")
	v.mustStatus(412, "PUT", davA+"w/f", "x", "If", "(<"+tf+"x>)")
	v.mustStatus(400, "PUT", davA+"w/f", "x", "If", "(<"+tf+">")
	etag := v.mustStatus(200, "GET", davA+"w/f", "").hdr.Get("ETag")
	v.mustStatus(201, "PUT", davA+"w/f", "new", "If", "<"+v.srv.URL+davA+"w/f> (<"+tf+"> ["+etag+"])")
	// The old entity tag no longer holds; one of two lists is enough.
	v.mustStatus(412, "PUT", davA+"w/f", "x", "If", "(<"+tf+"> ["+etag+"])")
	v.mustStatus(201, "PUT", davA+"w/f", "newer", "If", "(<"+tf+"> ["+etag+"]) (<"+tf+">)")

	// A collection holding a locked member: deleting or moving it needs
	// the member's token.
	v.mustStatus(423, "DELETE", davA+"w/", "")
	v.mustStatus(423, "MOVE", davA+"w/", "", "Destination", davA+"w2/")
	v.mustStatus(423, "MOVE", davA+"w/", "", "Destination", davA+"w2/", "If", "<"+davA+"w/g> (Not <"+tf+">)")
	v.mustStatus(201, "MOVE", davA+"w/", "", "Destination", davA+"w2/", "If", "<"+davA+"w/f> (<"+tf+">)")
	// The lock stayed behind: the moved file is free.
	v.mustStatus(201, "PUT", davA+"w2/f", "moved")
	tf2 := v.lock(davA+"w2/f", "exclusive", "0")
	v.mustStatus(201, "MOVE", davA+"w2/", "", "Destination", davA+"w3/", "If", "(<"+tf2+">)") // untagged: about every resource moved
	v.mustStatus(201, "MOVE", davA+"w3/", "", "Destination", davA+"w2/")
	v.mustStatus(200, "GET", davA+"w2/f", "")

	// MOVE between two locked resources: a tagged list for each.
	ta := v.lock(davA+"w2/f", "exclusive", "0")
	tb := v.lock(davA+"w2/g", "exclusive", "0")
	v.mustStatus(423, "MOVE", davA+"w2/f", "", "Destination", davA+"w2/g", "If", "<"+davA+"w2/f> (<"+ta+">)")
	v.mustStatus(204, "MOVE", davA+"w2/f", "", "Destination", davA+"w2/g",
		"If", "<"+davA+"w2/f> (<"+ta+">) <"+v.srv.URL+davA+"w2/g> (<"+tb+">)")

	// A depth-0 lock on a collection guards its membership, not its
	// members' content.
	tc := v.lock(davA+"w2/", "exclusive", "0")
	v.mustStatus(423, "PUT", davA+"w2/h", "x")
	v.mustStatus(423, "DELETE", davA+"w2/g", "")
	v.mustStatus(201, "PUT", davA+"w2/h", "x", "If", "(<"+tc+">)")
	v.mustStatus(204, "UNLOCK", davA+"w2/", "", "Lock-Token", "<"+tc+">")
	v.mustStatus(423, "DELETE", davA+"w2/", "")
	v.mustStatus(204, "DELETE", davA+"w2/", "", "If", "(<"+tb+">)")
	// The locks went with the resources: a new one by the name is free.
	v.mustStatus(201, "MKCOL", davA+"w2/", "")
	v.mustStatus(201, "PUT", davA+"w2/g", "free")
}

// TestDAVSharedLocks: shared locks coexist and exclude an exclusive one;
// any holder may write; a refresh keeps the scope and takes the new
// timeout; UNLOCK of one leaves the other.
func TestDAVSharedLocks(t *testing.T) {
	v := newEnv(t)
	v.mustStatus(201, "MKCOL", davA+"s/", "")
	s1 := v.lock(davA+"s/f", "shared", "0") // creates the file
	s2 := v.lock(davA+"s/f", "shared", "0")
	v.mustStatus(423, "LOCK", davA+"s/f", lockBody("exclusive"))
	v.mustStatus(423, "LOCK", davA+"s/", lockBody("exclusive"), "Depth", "infinity")
	v.mustStatus(423, "PUT", davA+"s/f", "x")
	v.mustStatus(201, "PUT", davA+"s/f", "x", "If", "(<"+s2+">)")

	a := v.mustStatus(200, "LOCK", davA+"s/f", "", "If", "(<"+s1+">)", "Timeout", "Second-100")
	if !strings.Contains(a.body, "<D:shared/>") || !strings.Contains(a.body, "Second-100") || !strings.Contains(a.body, s1) {
		t.Fatalf("refresh of a shared lock: %s", a.body)
	}
	v.mustStatus(412, "LOCK", davA+"s/f", "", "If", "(<opaquelocktoken:nothing>)")
	v.mustStatus(400, "LOCK", davA+"s/f", "")

	v.mustStatus(204, "UNLOCK", davA+"s/f", "", "Lock-Token", "<"+s1+">")
	v.mustStatus(412, "PUT", davA+"s/f", "y", "If", "(<"+s1+">)")
	v.mustStatus(201, "PUT", davA+"s/f", "y", "If", "(<"+s2+">)")
	v.mustStatus(204, "UNLOCK", davA+"s/f", "", "Lock-Token", "<"+s2+">")
	if tok := v.lock(davA+"s/f", "exclusive", "0"); !regexp.MustCompile(`^opaquelocktoken:[0-9a-f-]{36}$`).MatchString(tok) {
		t.Fatalf("token %q", tok)
	}
}
