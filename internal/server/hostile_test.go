package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

const api = "/rboinc_cgi/api/v1"

// hostileNames are refused as group or chain names: path tricks, the
// WU-name separator '-', spaces, shell metacharacters, non-ASCII, control
// bytes, empty and overlong.
var hostileNames = []string{
	"..", ".", "../x", "g/../../etc", "a/b", `a\b`, "%2e%2e", "a-b", "a b", " a", "a;touch /tmp/pwned",
	"$(touch /tmp/pwned)", "`id`", "a|b", "a&&b", "a>b", "a<b", "a'b", `a"b`, "a*", "~root", "é", "名前",
	"a\nb", "a\x00b", "a\tb", strings.Repeat("a", 65), "",
}

// refusedClearly checks a refusal: an error status, a JSON body with a
// code and a message naming what is wrong.
func refusedClearly(t *testing.T, what string, a answer, status int, words ...string) {
	t.Helper()
	if a.status != status {
		t.Errorf("%s: status %d, want %d (%s)", what, a.status, status, a.body)
		return
	}
	if a.err.Code == "" || a.err.Error == "" {
		t.Errorf("%s: no JSON error: %s", what, a.body)
	}
	for _, w := range words {
		if !strings.Contains(a.err.Error, w) {
			t.Errorf("%s: message %q does not mention %q", what, a.err.Error, w)
		}
	}
}

// everything is the state of both users and the chain count: what a
// refused request must not change.
func (v *env) everything() string {
	return v.state("alice") + v.state("bob") + fmt.Sprint("chains ", v.chainCount())
}

func TestHostileSubmitFields(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	base := func() wire.SubmitRequest { return langevin("g", "c", up, 2, refs[0], refs[1]) }
	type tc struct {
		name   string
		req    wire.SubmitRequest
		status int
		words  []string
	}
	var cases []tc
	for _, n := range hostileNames {
		r := base()
		r.Group = n
		cases = append(cases, tc{"group " + n, r, 400, []string{"group"}})
		r = base()
		r.Chains[0].Name = n
		cases = append(cases, tc{"name " + n, r, 400, []string{"name"}})
	}
	for _, q := range []string{"../../etc/passwd", "../templates/rboinc_langevin", "lang evin", "langevin;id", "", "é"} {
		r := base()
		r.Queue = q
		cases = append(cases, tc{"queue " + q, r, 400, []string{"queue"}})
	}
	r := base()
	r.Queue = "nosuch"
	cases = append(cases, tc{"unknown queue", r, 404, []string{"nosuch"}})
	for _, p := range []string{"../coor_file", "coor_file/../x", "coor file", "$(id)", "", "-coor_file"} {
		r := base()
		r.Chains[0].Files[p] = refs[0]
		cases = append(cases, tc{"parameter " + p, r, 400, []string{"parameter"}})
	}
	r = base()
	delete(r.Chains[0].Files, "coor_file")
	cases = append(cases, tc{"missing mandatory parameter", r, 400, []string{"coor_file"}})
	for _, u := range []string{"../alice", "../../etc", "up/../x", up + "/..", up + "/../../pool", "upZZ", "up" + strings.Repeat("0", 200), "up\x00"} {
		r := base()
		r.Upload = u
		cases = append(cases, tc{"upload " + u, r, 400, []string{"upload"}})
	}
	for _, m := range []string{"../../../etc/passwd", "ABCDEF0123456789ABCDEF0123456789", "x", "", strings.Repeat("0", 31) + "/"} {
		r := base()
		r.Chains[0].Files["coor_file"] = wire.FileRef{MD5: m}
		cases = append(cases, tc{"md5 " + m, r, 400, []string{"MD5"}})
	}
	for _, n := range []int{-1, 1000001} {
		r := base()
		r.Options.NumSteps = n
		cases = append(cases, tc{"num_steps", r, 400, []string{"num_steps"}})
	}
	r = base()
	r.Chains = append(r.Chains, r.Chains[0])
	cases = append(cases, tc{"same name twice", r, 400, []string{"twice"}})
	// Each case's "after" is the next one's "before": one snapshot per
	// request (under -race the snapshots were most of these tests' time).
	before := v.everything()
	for _, c := range cases {
		a := v.post("alice", api+"/submit", c.req)
		refusedClearly(t, c.name, a, c.status, c.words...)
		if after := v.everything(); after != before {
			t.Errorf("%s: refused but changed the server:\n%s\n---\n%s", c.name, before, after)
			before = after
		}
	}
	t.Logf("%d hostile submissions refused, nothing written", len(cases))
	// The upload is still usable: nothing above consumed it.
	if a := v.post("alice", api+"/submit", base()); !a.ok() {
		t.Fatalf("the valid submission after the hostile ones: %v", a)
	}
}

func TestHostileQueryAndPathFields(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "g", "c", 2)
	type tc struct {
		method, path string
		body         any
		status       int
	}
	var cases []tc
	for _, n := range []string{"../x", "..", "a b", "a;id", "é", "a-b", strings.Repeat("g", 65)} {
		q := "group=" + urlq(n)
		cases = append(cases,
			tc{"GET", api + "/status?" + q, nil, 400},
			tc{"GET", api + "/status?group=g&name=" + urlq(n), nil, 400},
			tc{"GET", api + "/results?" + q, nil, 400},
			tc{"POST", api + "/stop", wire.ChainRef{Group: n}, 400},
			tc{"POST", api + "/stop", wire.ChainRef{Group: "g", Name: n}, 400},
			tc{"POST", api + "/purge", wire.ChainRef{Group: n}, 400},
			tc{"POST", api + "/purge", wire.ChainRef{Group: "g", Name: n}, 400},
			tc{"POST", api + "/ack", wire.AckRequest{Group: n, Files: []string{"x_0"}}, 400},
			tc{"POST", bulkPath, wire.BulkRequest{Group: n, Files: []string{"x_0"}}, 400},
			tc{"POST", bulkPath, wire.BulkRequest{Group: "g", Name: n}, 400},
		)
	}
	for _, f := range []string{"../../state.db", "..", "x/../../y_0", `x\y_0`, "x", "x_", "x_01", "x_-1", ""} {
		cases = append(cases, tc{"POST", api + "/ack", wire.AckRequest{Group: "g", Files: []string{f}}, 400},
			tc{"POST", bulkPath, wire.BulkRequest{Group: "g", Files: []string{"c_0", f}}, 400})
	}
	for _, p := range []string{"/files/g/..%2f..%2fstate.db", "/files/g/..%2F..%2Frboinc.json", "/files/..%2f..%2fetc/passwd_0",
		"/files/g/x%5c..%5cy_0", "/files/g/%2e%2e", "/files/%2e%2e/x_0", "/files/g/x_0%00"} {
		cases = append(cases, tc{"GET", api + p, nil, 400})
	}
	cases = append(cases, tc{"GET", api + "/queues/..%2f..%2fetc%2fpasswd", nil, 404}, tc{"GET", api + "/queues/%2e%2e", nil, 404})
	before := v.everything() // each case's "after" is the next one's "before"
	for _, c := range cases {
		var body io.Reader
		if c.body != nil {
			j, _ := json.Marshal(c.body)
			body = strings.NewReader(string(j))
		}
		a := v.call("alice", c.method, c.path, body)
		if a.ok() || a.status >= 500 || (a.status != c.status && a.status != 404 && a.status != 400) {
			t.Errorf("%s %s %v: %v", c.method, c.path, c.body, a)
		}
		if after := v.everything(); after != before {
			t.Errorf("%s %s: changed the server", c.method, c.path)
			before = after
		}
	}
	t.Logf("%d hostile query/path requests refused", len(cases))
}

func urlq(s string) string {
	r := strings.NewReplacer("%", "%25", " ", "%20", "&", "%26", ";", "%3B", "/", "%2F", "\n", "%0A", "\x00", "%00", "+", "%2B", "#", "%23", "?", "%3F")
	return r.Replace(s)
}

// TestHostileDAVPaths: unsafe paths in the user's own area are refused and
// write nothing.
func TestHostileDAVPaths(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up := v.newUpload("alice")
	base := up.DAVPath
	before := v.everything() // each request's "after" is the next one's "before"
	for _, p := range []string{
		base + "..%2f..%2fbob%2fx", base + "%2e%2e/%2e%2e/x", base + "..%5c..%5cx", base + "a%5cb", base + ".hidden",
		base + ".htaccess", base + "a%00b", base + "a%0ab", base + "a%7fb", base + strings.Repeat("n", 256),
		base + strings.Repeat("d/", 600) + "x", base + "a//b", base + "%ff%fe",
	} {
		for _, m := range []string{"PUT", "MKCOL", "GET", "DELETE", "PROPFIND"} {
			a := v.call("alice", m, p, strings.NewReader("x"))
			if a.ok() || a.status >= 500 {
				t.Errorf("%s %s: %v", m, p, a)
			}
			if after := v.everything(); after != before {
				t.Errorf("%s %s: changed the server", m, p)
				before = after
			}
		}
	}
}

// TestSymlinksInScratchArea: symbolic links placed in a user's scratch area
// by other means (a shell on the server, a restored backup) are never
// followed: neither by submit nor by WebDAV.
func TestSymlinksInScratchArea(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	outside := t.TempDir()
	secret := "the administrator's secret\n"
	os.WriteFile(filepath.Join(outside, md5of(secret)), []byte(secret), 0o600)
	os.WriteFile(filepath.Join(outside, "outside-only"), []byte("x"), 0o600)
	vel := "0 0 0\n"

	// A symlinked file in an upload collection.
	up1, refs := v.upload("alice", vel)
	col1 := filepath.Join(v.e.DAVRoot(store0("alice")), up1)
	os.Symlink(filepath.Join(outside, md5of(secret)), filepath.Join(col1, md5of(secret)))
	a := v.post("alice", api+"/submit", langevin("g", "c1", up1, 1, wire.FileRef{MD5: md5of(secret)}, refs[0]))
	refusedClearly(t, "submit of a symlinked upload", a, 400, "not a regular file")

	// A symlinked upload collection.
	up2 := v.newUpload("alice")
	col2 := filepath.Join(v.e.DAVRoot(store0("alice")), up2.ID)
	os.Remove(col2)
	os.Symlink(outside, col2)
	a = v.post("alice", api+"/submit", langevin("g", "c2", up2.ID, 1, wire.FileRef{MD5: md5of(secret)}, refs[0]))
	refusedClearly(t, "submit from a symlinked collection", a, 400, "not a plain directory")

	if v.e.Pool.Has(md5of(secret)) {
		t.Fatal("the outside file reached the pool")
	}
	// WebDAV does not follow them either.
	for _, c := range []struct{ m, p string }{
		{"GET", up2.DAVPath + md5of(secret)}, {"GET", "/DAV/alice/" + up1 + "/" + md5of(secret)},
		{"PUT", up2.DAVPath + "planted"}, {"DELETE", up2.DAVPath}, {"DELETE", up2.DAVPath + "outside-only"},
		{"PROPFIND", up2.DAVPath}, {"MKCOL", up2.DAVPath + "sub/"}, {"MOVE", up2.DAVPath + "outside-only"},
	} {
		a := v.call("alice", c.m, c.p, strings.NewReader("x"), "Destination", "/DAV/alice/moved", "Depth", "1")
		refusedClearly(t, c.m+" through a symlink", a, 403, "symbolic link")
	}
	// A listing of the whole area shows the link but not what is behind it.
	a = v.call("alice", "PROPFIND", "/DAV/alice/", nil, "Depth", "infinity")
	if strings.Contains(a.body, "outside-only") {
		t.Errorf("PROPFIND followed the symlink: %s", a.body)
	}
	if got := tree(outside); len(got) != 3 {
		t.Errorf("the outside directory changed: %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, md5of(secret))); string(b) != secret {
		t.Error("the outside file changed")
	}
	// A symlinked scratch root.
	tok := "carol-token-0123456789abcdef0123456789abcdef"
	if _, err := v.db.AddUser(t.Context(), "carol", hashTok(tok)); err != nil {
		t.Fatal(err)
	}
	v.tokens["carol"] = tok
	os.Symlink(outside, v.e.DAVRoot(store0("carol")))
	a = v.call("carol", "GET", "/DAV/carol/"+md5of(secret), nil)
	refusedClearly(t, "a symlinked scratch root", a, 403, "not a plain directory")
}

func TestUploadMD5Mismatch(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up := v.newUpload("alice")
	col := filepath.Join(v.e.DAVRoot(store0("alice")), up.ID)
	// At upload: a file named by an MD5 must have it.
	a := v.call("alice", "PUT", up.DAVPath+md5of("announced\n"), strings.NewReader("something else\n"))
	refusedClearly(t, "PUT with a wrong MD5", a, 400, "MD5", md5of("announced\n"))
	if got := tree(col); len(got) != 1 {
		t.Errorf("the refused upload left files: %v", got)
	}
	// At submit: a file changed on disk after its upload is refused too.
	os.WriteFile(filepath.Join(col, md5of("1 2 3\n")), []byte("tampered\n"), 0o644)
	os.WriteFile(filepath.Join(col, md5of("0 0 0\n")), []byte("0 0 0\n"), 0o644)
	before := v.chainCount()
	a = v.post("alice", api+"/submit", langevin("g", "c", up.ID, 1, wire.FileRef{MD5: md5of("1 2 3\n")}, wire.FileRef{MD5: md5of("0 0 0\n")}))
	refusedClearly(t, "submit of a tampered upload", a, 400, "MD5")
	if v.chainCount() != before || v.e.Pool.Has(md5of("1 2 3\n")) || v.e.Pool.Has(md5of("tampered\n")) {
		t.Error("the tampered content was taken")
	}
}

// chunked hides a body's length, so the server must count while reading.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestUploadSizeLimits(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.e.Cfg.MaxUploadBytes = 1000
	// The upload collection and two files: 4096 bytes each, the least an
	// entry counts; then 2000 bytes left, too few for one more file.
	v.e.Cfg.MaxScratchBytes = 3*4096 + 2000
	up := v.newUpload("alice")
	col := filepath.Join(v.e.DAVRoot(store0("alice")), up.ID)
	big := strings.Repeat("x", 1001)
	a := v.call("alice", "PUT", up.DAVPath+md5of(big), strings.NewReader(big))
	refusedClearly(t, "declared too large", a, 413, "1000 bytes")
	if a.err.Code != wire.CodeTooLarge {
		t.Errorf("code %q", a.err.Code)
	}
	huge := strings.Repeat("y", 5<<20)
	a = v.call("alice", "PUT", up.DAVPath+md5of(huge), chunked{strings.NewReader(huge)})
	refusedClearly(t, "streamed too large", a, 413, "1000 bytes")
	if got := tree(col); len(got) != 1 {
		t.Fatalf("refused uploads left files: %v", got)
	}
	for i := range 2 {
		c := strings.Repeat(string(rune('a'+i)), 1000)
		if a := v.call("alice", "PUT", up.DAVPath+md5of(c), chunked{strings.NewReader(c)}); a.status != 201 {
			t.Fatalf("PUT at the limit: %v", a)
		}
	}
	// 12288 of 14288 bytes used: a 1000-byte file (counting 4096) no
	// longer fits.
	c := strings.Repeat("c", 1000)
	a = v.call("alice", "PUT", up.DAVPath+md5of(c), strings.NewReader(c))
	refusedClearly(t, "scratch quota, declared", a, 413, "14288")
	if a.err.Code != wire.CodeQuotaExceeded {
		t.Errorf("code %q", a.err.Code)
	}
	a = v.call("alice", "PUT", up.DAVPath+md5of(c), chunked{strings.NewReader(c)})
	refusedClearly(t, "scratch quota, streamed", a, 413, "14288")
	a = v.call("alice", "COPY", up.DAVPath+md5of(strings.Repeat("a", 1000)), nil, "Destination", up.DAVPath+"copy")
	refusedClearly(t, "scratch quota, COPY", a, 413, "14288")
	if got := tree(col); len(got) != 3 {
		t.Fatalf("want the two accepted files only: %v", got)
	}
}

func TestQuotas(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.e.Cfg.MaxRunningChains = 2
	v.submit("alice", "g", "c1", 2)
	v.submit("alice", "g", "c2", 2)
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	before := v.everything()
	a := v.post("alice", api+"/submit", langevin("g", "c3", up, 2, refs[0], refs[1]))
	refusedClearly(t, "third chain", a, 403, "2 chains in progress", "limit is 2")
	if a.err.Code != wire.CodeQuotaExceeded || v.everything() != before {
		t.Errorf("code %q, or the refusal changed the server", a.err.Code)
	}
	if a := v.post("alice", api+"/stop", wire.ChainRef{Group: "g", Name: "c1"}); !a.ok() {
		t.Fatal(a)
	}
	if a := v.post("alice", api+"/submit", langevin("g", "c3", up, 2, refs[0], refs[1])); !a.ok() {
		t.Fatalf("after stopping one: %v", a)
	}
	// Bob is not counted against alice.
	v.submit("bob", "g", "c1", 1)

	// Pooled bytes: each distinct content counts once per user.
	v.e.Cfg.MaxRunningChains = 0
	au, _ := v.db.UserByName(t.Context(), "alice")
	use, err := v.db.UsageOf(t.Context(), au.ID) // the two inputs and the queue's defaults
	if err != nil || use.PoolBytes < 12 {
		t.Fatalf("usage %+v %v", use, err)
	}
	v.e.Cfg.MaxPoolBytes = use.PoolBytes + 10
	if a := v.post("alice", api+"/submit", langevin("g", "c4", "", 1, refs[0], refs[1])); !a.ok() {
		t.Fatalf("same contents again: %v", a)
	}
	up, refs = v.upload("alice", "7 8 9 10\n", "1 1 1\n")
	before = v.everything()
	a = v.post("alice", api+"/submit", langevin("g", "c5", up, 1, refs[0], refs[1]))
	refusedClearly(t, "pool quota", a, 403, fmt.Sprintf("this submission adds 15; the limit is %d bytes", use.PoolBytes+10))
	if v.everything() != before {
		t.Error("the refusal changed the server")
	}
	// Policy: priority and replication.
	v.e.Cfg.MaxPoolBytes = 0
	v.e.Cfg.MaxPriority, v.e.Cfg.MaxTargetNResults = 10, 2
	r := langevin("g", "c6", up, 1, refs[0], refs[1])
	p := 11
	r.Options.Priority = &p
	refusedClearly(t, "priority", v.post("alice", api+"/submit", r), 403, "priority 11")
	r.Options.Priority = nil
	r.Options.TargetNResults = 3
	refusedClearly(t, "target_nresults", v.post("alice", api+"/submit", r), 403, "target_nresults 3")
	r.Options.TargetNResults = 2
	if a := v.post("alice", api+"/submit", r); !a.ok() {
		t.Fatalf("within policy: %v", a)
	}
}

func TestMalformedJSON(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "g", "c", 1)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepObj := strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000)
	bodies := []string{"", "{not json", "null", "[]", "\xff\xfe{}", deep, deepObj, `{"group": {"$ne": 1}}`,
		`{"queue":"langevin","group":"g","options":{"num_steps":"1; touch /tmp/pwned"}}`,
		`{"queue":"langevin","group":"g","options":{"priority":"1$(id)"}}`,
		`{"queue":"langevin","group":"g","options":{"num_steps":1e999}}`,
		`{"group":"g","files":"../../state.db"}`, `{"md5s": "x"}`, `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>`}
	before := v.everything() // each request's "after" is the next one's "before"
	for _, path := range []string{"/submit", "/stop", "/purge", "/ack", "/pool/missing"} {
		for _, b := range bodies {
			a := v.post("alice", api+path, b)
			if a.status != 400 && a.status != 404 {
				t.Errorf("POST %s %.40q: %v", path, b, a)
			}
			if a.err.Error == "" {
				t.Errorf("POST %s %.40q: no JSON error: %s", path, b, a.body)
			}
			if after := v.everything(); after != before {
				t.Errorf("POST %s %.40q changed the server", path, b)
				before = after
			}
		}
	}
}

// TestConcurrentSameChainName: many clients submit the same chain at once
// over HTTP (retries of one submission); exactly one makes it, the others
// are answered with it, and BOINC gets exactly one work unit.
func TestConcurrentSameChainName(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "warmup", "w", 1) // pools the two contents
	refs := []wire.FileRef{{MD5: md5of("1 2 3\n"), Size: 6}, {MD5: md5of("0 0 0\n"), Size: 6}}
	const n = 8
	var wg sync.WaitGroup
	got := make([]answer, n)
	for i := range n {
		wg.Go(func() { got[i] = v.post("alice", api+"/submit", langevin("g", "same", "", 2, refs[0], refs[1])) })
	}
	wg.Wait()
	wins := 0
	first := ""
	for _, a := range got {
		var r wire.SubmitResponse
		if !a.ok() || json.Unmarshal([]byte(a.body), &r) != nil || len(r.Chains) != 1 {
			t.Errorf("unexpected answer: %v", a)
			continue
		}
		if !r.AlreadySubmitted {
			wins++
		}
		if first == "" {
			first = r.Chains[0].FirstWU
		} else if r.Chains[0].FirstWU != first {
			t.Errorf("answers name different chains: %s and %s", first, r.Chains[0].FirstWU)
		}
	}
	if wins != 1 {
		t.Fatalf("%d submissions of one chain made it, want exactly 1", wins)
	}
	if n := v.boincWUs("same-ALICE\\_g-%"); n != 1 {
		t.Fatalf("%d work units for the chain in BOINC", n)
	}
	// Under the same name, a different chain is still refused.
	a := v.post("alice", api+"/submit", langevin("g", "same", "", 3, refs[0], refs[1]))
	if a.status != http.StatusConflict || a.err.Code != wire.CodeNameTaken {
		t.Fatalf("a different chain under a taken name: %v", a)
	}
}

// TestHoleR34ConcurrentFirstSubmissions: concurrent first submissions of
// different names into one new group all succeed (the original failed one
// of them with "Can't create group directory").
func TestHoleR34ConcurrentFirstSubmissions(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "warmup", "w", 1) // pools the two contents
	refs := []wire.FileRef{{MD5: md5of("1 2 3\n"), Size: 6}, {MD5: md5of("0 0 0\n"), Size: 6}}
	const n = 8
	var wg sync.WaitGroup
	got := make([]answer, n)
	for i := range n {
		wg.Go(func() {
			got[i] = v.post("alice", api+"/submit", langevin("fresh", "c"+string(rune('a'+i)), "", 1, refs[0], refs[1]))
		})
	}
	wg.Wait()
	for _, a := range got {
		if !a.ok() {
			t.Errorf("concurrent first submission into a new group: %v", a)
		}
	}
}

// TestCopyChecksLikeUpload: a COPY writes files under the same rules as a
// PUT: a copy named by an MD5 must have it.
func TestCopyChecksLikeUpload(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up, refs := v.upload("alice", "content\n")
	src := "/DAV/alice/" + up + "/" + refs[0].MD5
	a := v.call("alice", "COPY", src, nil, "Destination", "/DAV/alice/"+up+"/"+md5of("other\n"))
	refusedClearly(t, "COPY to a wrong MD5 name", a, 400, "MD5")
	if a := v.call("alice", "COPY", src, nil, "Destination", "/DAV/alice/"+up+"/plain"); a.status != http.StatusCreated {
		t.Fatalf("COPY to a plain name: %v", a)
	}
	if got := tree(filepath.Join(v.e.DAVRoot(store0("alice")), up)); len(got) != 3 {
		t.Errorf("files: %v", got)
	}
}

// TestHostileBulk: the bulk download asked for another account's files,
// with malformed, huge (announced and chunked) and overlong bodies, and
// with thousands of names: each refused clearly or answered with nothing
// of another's, and nothing changes.
func TestHostileBulk(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	alice := v.finishedGroup("alice", "g", 2)
	v.finishedGroup("bob", "h", 1)
	before := v.everything()
	// Another account's names, in the caller's group of that name, in one
	// of his own, and with the other's group's next waiting files.
	for _, req := range []wire.BulkRequest{{Group: "g", Files: names(alice)}, {Group: "h", Files: names(alice)}, {Group: "g"}} {
		a := v.post("bob", bulkPath, req)
		if a.status != http.StatusOK || len(untar(t, a.body)) != 0 {
			t.Errorf("bob asking for %v: %d, %d files", req, a.status, len(untar(t, a.body)))
		}
	}
	thousands := make([]string, 5000)
	for k := range thousands {
		thousands[k] = fmt.Sprintf("wu%d_0", k)
	}
	for _, c := range []struct {
		what   string
		body   string
		status int
		words  []string
	}{
		{"5,000 names", `{"group":"g","files":` + mustJSON(thousands) + `}`, http.StatusRequestEntityTooLarge, nil},
		{"a name of 1 MiB", `{"group":"g","files":["` + strings.Repeat("a", 1<<20) + `_0"]}`, http.StatusRequestEntityTooLarge, nil},
		{"not JSON", `group=g&files=x_0`, http.StatusBadRequest, []string{"JSON"}},
		{"nested", `{"group":"g","files":[["x_0"]]}`, http.StatusBadRequest, nil},
		{"a number for the group", `{"group":1}`, http.StatusBadRequest, nil},
		{"an unknown field", `{"group":"g","user":"alice"}`, http.StatusBadRequest, nil},
		{"a second object", `{"group":"g"}{"group":"g"}`, http.StatusBadRequest, nil},
	} {
		refusedClearly(t, c.what, v.post("alice", bulkPath, c.body), c.status, c.words...)
	}
	for _, length := range []int64{16<<20 + 12, -1} {
		body := io.MultiReader(strings.NewReader(`{"group":"`), &repeated{item: "g", n: 16 << 20}, strings.NewReader(`"}`))
		a := rawPost(t, v.srv.URL, v.tokens["alice"], wire.PathFilesBulk, body, length)
		if a.status != http.StatusRequestEntityTooLarge || a.err.Code != wire.CodeTooLarge {
			t.Errorf("a body of 16 MiB (length %d): %d %v", length, a.status, a.err)
		}
	}
	if after := v.everything(); after != before {
		t.Errorf("hostile bulk requests changed the server:\n%s\n%s", before, after)
	}
	if got := v.results("alice", "g"); len(got) != len(alice) {
		t.Errorf("alice has %d results waiting, want %d", len(got), len(alice))
	}
}
