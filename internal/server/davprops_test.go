package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func setProp(value string) string {
	return `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:note xmlns:x="urn:rboinc-test">` +
		value + `</x:note></D:prop></D:set></D:propertyupdate>`
}

const getProp = `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><x:note xmlns:x="urn:rboinc-test"/></D:prop></D:propfind>`

// TestDAVDeadProperties: a dead property stays with its file through a
// new PUT, goes with it on MOVE and COPY, and is gone once the file is
// deleted; files still being written are not listed; properties count in
// the scratch quota.
func TestDAVDeadProperties(t *testing.T) {
	v := newEnv(t)
	v.mustStatus(201, "MKCOL", davA+"p/", "")
	v.mustStatus(201, "PUT", davA+"p/f", "one")
	v.mustStatus(207, "PROPPATCH", davA+"p/f", setProp("kept"))
	has := func(path, value string) bool {
		a := v.mustStatus(207, "PROPFIND", davA+path, getProp, "Depth", "0")
		return strings.Contains(a.body, ">"+value+"</")
	}
	v.mustStatus(201, "PUT", davA+"p/f", "two")
	if !has("p/f", "kept") {
		t.Fatal("a PUT dropped the file's dead property")
	}
	v.mustStatus(201, "COPY", davA+"p/f", "", "Destination", davA+"p/g")
	v.mustStatus(201, "MOVE", davA+"p/f", "", "Destination", davA+"p/h")
	if !has("p/g", "kept") || !has("p/h", "kept") {
		t.Fatal("COPY or MOVE lost the dead property")
	}
	v.mustStatus(204, "DELETE", davA+"p/h", "")
	v.mustStatus(201, "PUT", davA+"p/h", "new")
	if has("p/h", "kept") {
		t.Fatal("a deleted file's dead property came back with a new file by its name")
	}

	// An upload in progress (a hidden temporary name) is not listed.
	dir := filepath.Join(v.e.DAVRoot(mustAlice(t, v)), "p")
	os.WriteFile(filepath.Join(dir, ".rboinc-put-123"), []byte("partial"), 0o600)
	if a := v.mustStatus(207, "PROPFIND", davA+"p/", "", "Depth", "1"); strings.Contains(a.body, ".rboinc-put") {
		t.Fatalf("a file being written is listed:\n%s", a.body)
	}
	os.Remove(filepath.Join(dir, ".rboinc-put-123"))

	// Properties count in the quota: a collection and a file (4096 bytes
	// each, the least an entry counts) and 1500 bytes of properties leave
	// no room for a new file under a 12692-byte limit; without the
	// properties it would fit.
	v.e.Cfg.MaxScratchBytes = 2*4096 + 4500
	v.mustStatus(204, "DELETE", davA+"p/", "")
	v.mustStatus(201, "MKCOL", davA+"q/", "")
	v.mustStatus(201, "PUT", davA+"q/f", "x")
	v.mustStatus(207, "PROPPATCH", davA+"q/f", setProp(strings.Repeat("p", 1500)))
	if a := v.call("alice", "PUT", davA+"q/g", strings.NewReader(strings.Repeat("c", 1000))); a.status != 413 || a.err.Code != "quota_exceeded" {
		t.Fatalf("PUT past the quota with the properties counted: %v", a)
	}
	if a := v.call("alice", "PROPPATCH", davA+"q/f", strings.NewReader(setProp(strings.Repeat("p", 5000)))); a.status != 413 || a.err.Code != "quota_exceeded" {
		t.Fatalf("PROPPATCH past the quota: %v", a)
	}
	if !has("q/f", strings.Repeat("p", 1500)) {
		t.Fatal("the refused PROPPATCH changed the stored property")
	}
}
