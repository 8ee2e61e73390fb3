package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/workflow/wire"
)

// inlineBody is a PathSubmitInline body: the request, a newline, contents.
func inlineBody(t *testing.T, req wire.SubmitRequest, contents ...string) *strings.Reader {
	t.Helper()
	for _, c := range contents {
		req.Inline = append(req.Inline, wire.FileRef{MD5: md5of(c), Size: int64(len(c))})
	}
	head, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReader(string(head) + "\n" + strings.Join(contents, ""))
}

func inlineChains(group string, n int) (wire.SubmitRequest, []string) {
	vel := "0.5 0 0\n"
	contents := []string{vel}
	req := wire.SubmitRequest{Queue: "langevin", Group: group, Options: wire.Options{NumSteps: 2}}
	for i := range n {
		coor := fmt.Sprintf("%d 1 2\n", i)
		contents = append(contents, coor)
		req.Chains = append(req.Chains, wire.ChainSpec{Name: fmt.Sprint("c", i), Files: map[string]wire.FileRef{
			"coor_file": {MD5: md5of(coor), Size: int64(len(coor))}, "vel_file": {MD5: md5of(vel), Size: int64(len(vel))}}})
	}
	return req, contents
}

func TestSubmitInlineOverHTTP(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	req, contents := inlineChains("g", 20)
	a := v.call("alice", "POST", api+"/submit/inline", inlineBody(t, req, contents...))
	if !a.ok() {
		t.Fatal(a)
	}
	var resp wire.SubmitResponse
	if err := json.Unmarshal([]byte(a.body), &resp); err != nil || len(resp.Chains) != 20 {
		t.Fatalf("%v: %s", err, a.body)
	}
	if n := v.boincWUs("%-ALICE\\_g-0-2-%"); n != 20 {
		t.Fatalf("%d work units", n)
	}
	for _, c := range contents {
		if sum, _, err := md5sum.File(v.e.Pool.Path(md5of(c))); err != nil || sum != md5of(c) {
			t.Fatalf("content %q not pooled: %v", c, err)
		}
	}
	// Everything is on the server now: the same contents again are read
	// past, and the plain path needs no upload at all.
	req.Group = "h"
	if a := v.call("alice", "POST", api+"/submit/inline", inlineBody(t, req, contents...)); !a.ok() {
		t.Fatal(a)
	}
	req.Group = "k"
	if a := v.post("alice", api+"/submit", req); !a.ok() {
		t.Fatal(a)
	}
}

func TestSubmitInlineRefusals(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	req, contents := inlineChains("g", 3)
	before := v.state("alice")
	raw, _ := json.Marshal(req)

	// Refused before any content is read: nothing changes.
	a := v.call("alice", "POST", api+"/submit/inline", strings.NewReader(string(raw)+"X"))
	refusedClearly(t, "no newline after the request", a, 400, "followed by a newline")
	a = v.call("alice", "POST", api+"/submit/inline", strings.NewReader(`{"queue":"langevin","identity":"bob"}`+"\n"))
	refusedClearly(t, "unknown field", a, 400, "unknown field")
	a = v.call("alice", "POST", api+"/submit/inline", strings.NewReader("[1]\n"))
	refusedClearly(t, "not an object", a, 400, "JSON object")
	a = v.call("", "POST", api+"/submit/inline", inlineBody(t, req, contents...))
	if a.status != 401 {
		t.Errorf("without a token: %v", a)
	}
	// The inline contents count against the scratch-area limit, like uploads.
	v.e.Cfg.MaxScratchBytes = 20
	a = v.call("alice", "POST", api+"/submit/inline", inlineBody(t, req, contents...))
	refusedClearly(t, "over the scratch limit", a, 413, "limit is 20 bytes")
	if a.err.Code != wire.CodeQuotaExceeded {
		t.Errorf("code %q", a.err.Code)
	}
	v.e.Cfg.MaxScratchBytes = 0
	v.unchanged(t, "refused inline submissions", "alice", before)

	// A damaged content is found as it streams: no chain, no work unit,
	// and nothing under its name (the contents before it, checked, may
	// stay in the pool, as uploads taken before a failure do).
	body := inlineBody(t, req, contents...)
	b := make([]byte, body.Len())
	body.Read(b)
	damaged := strings.Replace(string(b), "2 1 2\n", "2 1 3\n", 1)
	a = v.call("alice", "POST", api+"/submit/inline", strings.NewReader(damaged))
	refusedClearly(t, "damaged content", a, 400, "inline content "+md5of("2 1 2\n"), "have MD5 "+md5of("2 1 3\n"), "nothing was submitted")
	if v.chainCount() != 0 || v.boincWUs("%") != 0 {
		t.Fatal("a refused submission created chains or work units")
	}
	if v.e.Pool.Has(md5of("2 1 2\n")) {
		t.Fatal("the damaged content entered the pool")
	}
}

// A WebDAV MOVE puts a file under an MD5 name without checking it: taking
// it into the pool must check it, however the upload got there.
func TestMovedUploadIsChecked(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up := v.newUpload("alice")
	real, fake := "1 2 3\n", "6 6 6\n"
	if a := v.call("alice", "PUT", up.DAVPath+"plain", strings.NewReader(fake)); !a.ok() {
		t.Fatal(a)
	}
	if a := v.call("alice", "PUT", up.DAVPath+md5of("0 0 0\n"), strings.NewReader("0 0 0\n")); !a.ok() {
		t.Fatal(a)
	}
	// First a verified file under the name, then the unchecked one over it.
	if a := v.call("alice", "PUT", up.DAVPath+md5of(real), strings.NewReader(real)); !a.ok() {
		t.Fatal(a)
	}
	if a := v.call("alice", "MOVE", up.DAVPath+"plain", nil, "Destination", up.DAVPath+md5of(real), "Overwrite", "T"); !a.ok() {
		t.Fatal(a)
	}
	r := langevin("g", "c", up.ID, 1, wire.FileRef{MD5: md5of(real), Size: 6}, wire.FileRef{MD5: md5of("0 0 0\n"), Size: 6})
	a := v.post("alice", api+"/submit", r)
	refusedClearly(t, "moved unchecked file", a, 400, "not the announced")
	if b, err := os.ReadFile(v.e.Pool.Path(md5of(real))); err == nil && string(b) != real {
		t.Fatal("the pool holds a content under another content's name")
	}
}
