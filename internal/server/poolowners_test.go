package server_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestPoolIsNoOracle: bob cannot learn whether alice's private contents are
// on the server (pool/missing lists them for him) nor submit them by MD5
// and size alone; with their bytes (uploaded, or inline) he can, and the
// pool keeps its one copy.
func TestPoolIsNoOracle(t *testing.T) {
	v := newEnv(t)
	api := "/rboinc_cgi/api/v1"
	secret, other := "alice's private coordinates\n", "alice's private velocities\n"
	up, refs := v.upload("alice", secret, other)
	if a := v.post("alice", api+"/submit", langevin("g", "c", up, 1, refs[0], refs[1])); !a.ok() {
		t.Fatal(a)
	}
	s, o := refs[0], refs[1]
	missing := func(user string, sums ...string) []string {
		t.Helper()
		a := v.post(user, api+"/pool/missing", wire.MissingRequest{MD5s: sums})
		var m wire.MissingResponse
		if !a.ok() || json.Unmarshal([]byte(a.body), &m) != nil {
			t.Fatalf("pool/missing as %s: %v", user, a)
		}
		return m.Missing
	}
	if m := missing("alice", s.MD5, o.MD5); len(m) != 0 {
		t.Fatalf("alice's own contents missing for her: %v", m)
	}
	if m := missing("bob", s.MD5, o.MD5); len(m) != 2 {
		t.Fatalf("pool/missing tells bob that alice's contents exist: missing %v", m)
	}
	if a := v.post("bob", api+"/submit", langevin("g", "b", "", 1, s, o)); a.status != http.StatusConflict || a.err.Code != wire.CodeMissingContent {
		t.Fatalf("bob submits alice's contents by MD5 alone: %v", a)
	}
	before, err := os.Stat(v.e.Pool.Path(s.MD5))
	if err != nil {
		t.Fatal(err)
	}
	// Other bytes under alice's MD5: refused, her copy untouched.
	forged := wire.SubmitRequest{Queue: "langevin", Group: "g", Options: wire.Options{NumSteps: 1}, Inline: []wire.FileRef{s},
		Chains: []wire.ChainSpec{{Name: "f", Files: map[string]wire.FileRef{"coor_file": s, "vel_file": s}}}}
	head, _ := json.Marshal(forged)
	if a := v.call("bob", "POST", api+"/submit/inline", strings.NewReader(string(head)+"\n"+strings.Repeat("x", int(s.Size)))); a.status != http.StatusBadRequest || !strings.Contains(a.err.Error, "the bytes sent have MD5") {
		t.Fatalf("bob's forged bytes: %v", a)
	}
	// The bytes themselves: uploaded (s) and inline (o).
	upB := v.newUpload("bob")
	if a := v.call("bob", "PUT", upB.DAVPath+s.MD5, strings.NewReader(secret)); a.status != http.StatusCreated {
		t.Fatal(a)
	}
	req := langevin("g", "b", upB.ID, 1, s, o)
	if a := v.call("bob", "POST", api+"/submit/inline", inlineBody(t, req, other)); !a.ok() {
		t.Fatalf("bob with the bytes: %v", a)
	}
	if m := missing("bob", s.MD5, o.MD5); len(m) != 0 {
		t.Fatalf("bob's contents missing for him after he sent them: %v", m)
	}
	after, err := os.Stat(v.e.Pool.Path(s.MD5))
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the pool's copy of alice's content was replaced (%v)", err)
	}
	copies := 0
	filepath.WalkDir(v.e.Pool.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.Contains(d.Name(), s.MD5) || strings.Contains(d.Name(), o.MD5)) {
			copies++
		}
		return nil
	})
	if copies != 2 {
		t.Fatalf("%d files in the pool for two contents", copies)
	}
}

// TestPoolQuotaIsNoOracle: the pool quota (max_pool_bytes) counts another
// user's content named by MD5 as bob announces it, not at its size in the
// pool: his answer for alice's private MD5 is the one for an MD5 nobody
// has, so neither its existence nor its size shows in "this submission
// adds N bytes".
func TestPoolQuotaIsNoOracle(t *testing.T) {
	v := newEnv(t)
	api := "/rboinc_cgi/api/v1"
	up, refs := v.upload("alice", strings.Repeat("alice's private coordinates\n", 100), "0 0 0\n")
	if a := v.post("alice", api+"/submit", langevin("g", "c", up, 1, refs[0], refs[1])); !a.ok() {
		t.Fatal(a)
	}
	v.e.Cfg.MaxPoolBytes = 1 << 20
	ask := func(sum string) answer {
		t.Helper()
		// The second input, announced at the whole quota: any byte more
		// passes it.
		req := langevin("g", "b", "", 1, wire.FileRef{MD5: sum, Size: 0}, wire.FileRef{MD5: strings.Repeat("f", 32), Size: 1 << 20})
		return v.post("bob", api+"/submit", req)
	}
	nobody := strings.Repeat("e", 32)
	hers, none := ask(refs[0].MD5), ask(nobody)
	// Which missing content a refusal names first is either one.
	anon := strings.NewReplacer(refs[0].MD5, "MD5", nobody, "MD5", strings.Repeat("f", 32), "MD5")
	if hers.status != none.status || hers.err.Code != none.err.Code || anon.Replace(hers.err.Error) != anon.Replace(none.err.Error) {
		t.Fatalf("alice's content tells apart from none:\n  hers: %v\n  none: %v", hers, none)
	}
}

// TestSubmitRefusalListsMissing: a submission naming contents by MD5
// alone is refused with the list of those the user lacks (and no more:
// another user's private content is listed as missing for them, as
// pool/missing does), so that clients need not ask pool/missing first.
func TestSubmitRefusalListsMissing(t *testing.T) {
	v := newEnv(t)
	api := "/rboinc_cgi/api/v1"
	up, refs := v.upload("alice", "alice's coordinates\n", "alice's velocities\n")
	if a := v.post("alice", api+"/submit", langevin("g", "c", up, 1, refs[0], refs[1])); !a.ok() {
		t.Fatal(a)
	}
	fresh := wire.FileRef{MD5: md5hex("never sent\n"), Size: 11}
	a := v.post("alice", api+"/submit", langevin("g", "d", "", 1, refs[0], fresh))
	if a.status != http.StatusConflict || a.err.Code != wire.CodeMissingContent || !slices.Equal(a.err.Missing, []string{fresh.MD5}) {
		t.Fatalf("alice names one known and one new content: %v (missing %v)", a, a.err.Missing)
	}
	want := []string{refs[0].MD5, refs[1].MD5}
	slices.Sort(want)
	a = v.post("bob", api+"/submit", langevin("g", "b", "", 1, refs[0], refs[1]))
	if a.status != http.StatusConflict || a.err.Code != wire.CodeMissingContent || !slices.Equal(a.err.Missing, want) {
		t.Fatalf("bob names alice's contents: %v (missing %v, want %v)", a, a.err.Missing, want)
	}
	// Known contents alone: made in this one request.
	if a := v.post("alice", api+"/submit", langevin("g", "e", "", 1, refs[0], refs[1])); !a.ok() {
		t.Fatalf("alice's known contents by MD5 alone: %v", a)
	}
}
