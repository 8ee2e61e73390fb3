package server_test

// Regression tests for the security holes of the original RBoinc, numbered
// as in rboinc-original.md section 12. Each would fail on the original
// behaviour it names.

import (
	"bufio"
	"context"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Hole 1: no authentication; identity was the client's -user.
func TestHole01NoAuthentication(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "g", "c", 1)
	reqs := [][2]string{
		{"GET", api + "/queues"}, {"GET", api + "/queues/langevin"}, {"POST", api + "/pool/missing"}, {"POST", api + "/uploads"},
		{"POST", api + "/submit"}, {"GET", api + "/status?group=g"}, {"POST", api + "/stop"}, {"POST", api + "/purge"},
		{"GET", api + "/results?group=g"}, {"GET", api + "/files/g/x_0"}, {"POST", api + "/ack"}, {"GET", api + "/whoami"},
		{"PROPFIND", "/DAV/alice/"}, {"PUT", "/DAV/alice/x"}, {"GET", "/DAV/alice/"},
	}
	bogus := map[string]string{"": "", "bogus token": "Bearer 0123456789abcdef", "empty bearer": "Bearer ", "basic without password": "Basic YWxpY2U6"}
	for _, r := range reqs {
		for what, hdr := range bogus {
			before := v.everything()
			a := v.call("", r[0], r[1], strings.NewReader(`{"group":"g"}`), "Authorization", hdr)
			refusedClearly(t, r[0]+" "+r[1]+" with "+what, a, http.StatusUnauthorized)
			if v.everything() != before {
				t.Errorf("%s %s with %s changed the server", r[0], r[1], what)
			}
		}
	}
	// Identity comes from the token alone: a name in the request does not
	// change it, and a body cannot carry one.
	req, _ := http.NewRequest("GET", v.srv.URL+api+"/whoami", nil)
	req.SetBasicAuth("bob", v.tokens["alice"])
	if resp, _ := noRedirect.Do(req); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("alice's token under bob's name: %d", resp.StatusCode)
	}
	for _, field := range []string{"user", "LoginName", "loginname", "login_name"} {
		a := v.post("alice", api+"/stop", `{"group":"g","`+field+`":"bob"}`)
		refusedClearly(t, "a "+field+" field", a, 400, field)
	}
}

// Hole 2: client values were pasted into a bash script the server sourced.
func TestHole02NoShellInjection(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	canary := filepath.Join(t.TempDir(), "pwned")
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	for _, inj := range []string{"$(touch " + canary + ")", "`touch " + canary + "`", "x; touch " + canary, "x\ntouch " + canary, "x' ; touch '" + canary} {
		for _, field := range []string{"group", "name", "queue"} {
			r := langevin("g", "c", up, 1, refs[0], refs[1])
			switch field {
			case "group":
				r.Group = inj
			case "name":
				r.Chains[0].Name = inj
			case "queue":
				r.Queue = inj
			}
			refusedClearly(t, field+" "+inj, v.post("alice", api+"/submit", r), 400, field)
		}
	}
	// The numeric settings the original wrote unquoted are typed here.
	for _, opt := range []string{"num_steps", "priority", "fpops_est", "fpops_bound", "memory_bound", "target_nresults", "min_quorum", "batch", "assign_user_all"} {
		body := `{"queue":"langevin","group":"g","upload":"` + up + `","chains":[{"name":"c","files":{}}],"options":{"` + opt + `":"1; touch ` + canary + `"}}`
		refusedClearly(t, opt, v.post("alice", api+"/submit", body), 400, "JSON")
	}
	// The hook, which BOINC runs with work-unit data, takes no shell
	// either: a hostile argument is just a name it does not know.
	cmd := exec.Command(realServer(t), "process", "--root", v.e.Root, "--error", "1", "$(touch "+canary+")", "1", "0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("hook with a hostile argument: %v\n%s", err, out)
	}
	cmd = exec.Command(realServer(t), "process", "--root", v.e.Root, "7", "/x/`touch "+canary+"`_0_r1_0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("hook with a hostile path: %v\n%s", err, out)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("a shell ran an injected command")
	}
	// The same upload still submits: nothing was consumed.
	if a := v.post("alice", api+"/submit", langevin("g", "c", up, 1, refs[0], refs[1])); !a.ok() {
		t.Fatal(a)
	}
}

// Hole 3: random_id unvalidated: a submission could read from and move
// files out of any directory relative to the DAV root.
func TestHole03UploadIDTraversal(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	upB, refsB := v.upload("bob", "1 2 3\n", "0 0 0\n")
	_, _ = v.upload("alice", "x\n")
	for _, id := range []string{"../bob/" + upB, "../../pool", "..", "/etc", "up/../../results", upB + "/../" + upB} {
		before := v.everything()
		a := v.post("alice", api+"/submit", langevin("g", "c", id, 1, refsB[0], refsB[1]))
		refusedClearly(t, "upload "+id, a, 400, "upload")
		if v.everything() != before {
			t.Errorf("upload %q changed the server", id)
		}
	}
	// A well-formed id of someone else's is as unknown as a made-up one.
	before := v.everything()
	refusedClearly(t, "bob's upload id", v.post("alice", api+"/submit", langevin("g", "c", upB, 1, refsB[0], refsB[1])), 404, "does not exist")
	if v.everything() != before {
		t.Error("bob's upload was touched")
	}
}

// Hole 4: LoginName unvalidated, used in directory and WU names and in a
// bash variable.
func TestHole04UserNames(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	for _, n := range []string{"../x", "a_b", "a-b", "a b", "a;id", "$(id)", "é", "", strings.Repeat("a", 33), "a/b", "."} {
		if _, err := server.AddUser(context.Background(), v.db, n); err == nil {
			t.Errorf("user name %q accepted", n)
		}
	}
	resp := v.submit("alice", "g", "c", 2)
	if w := resp.Chains[0].FirstWU; !strings.HasPrefix(w, "c-ALICE_g-0-2-RND") {
		t.Errorf("WU name %q", w)
	}
	if ents, _ := os.ReadDir(filepath.Join(v.e.Root, "dav")); len(ents) != 1 || ents[0].Name() != "alice" {
		t.Errorf("scratch areas: %v", ents)
	}
}

// Hole 5 (and 12): the remove action took an unvalidated directory and
// deleted every staged file, also those the client never got.
func TestHole05AckOnlyOwnListedFiles(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	c := v.submit("alice", "g", "c", 2)
	v.finish(c.Chains[0].FirstWU)
	ctx := context.Background()
	au, _ := v.db.UserByName(ctx, "alice")
	res, _ := v.e.Results(ctx, au, "g", "")
	if len(res.Files) != 3 {
		t.Fatalf("results: %+v", res)
	}
	for _, f := range []string{"../../state.db", "../ALICE_g/" + res.Files[0].Name, "/etc/passwd", `..\x_0`} {
		refusedClearly(t, "ack "+f, v.post("alice", api+"/ack", wire.AckRequest{Group: "g", Files: []string{f}}), 400, "result file name")
	}
	for _, g := range []string{"..", "../ALICE_g", "g/.."} {
		refusedClearly(t, "ack group "+g, v.post("alice", api+"/ack", wire.AckRequest{Group: g, Files: []string{res.Files[0].Name}}), 400, "group")
	}
	if _, err := os.Stat(filepath.Join(v.e.Root, "state.db")); err != nil {
		t.Fatal("state.db is gone")
	}
	// Bob acknowledging alice's file removes nothing.
	before := v.state("alice")
	v.post("bob", api+"/ack", wire.AckRequest{Group: "g", Files: []string{res.Files[0].Name}})
	v.unchanged(t, "bob's ack", "alice", before)
	// Alice acknowledging one file removes that one only.
	a := v.post("alice", api+"/ack", wire.AckRequest{Group: "g", Files: []string{res.Files[1].Name}})
	if !a.ok() || !strings.Contains(a.body, `"count":1`) {
		t.Fatal(a)
	}
	left := tree(filepath.Join(v.e.Root, "results", "ALICE_g"))
	if len(left) != 3 || strings.Contains(strings.Join(left, " "), res.Files[1].Name) {
		t.Errorf("left on the server: %v", left)
	}
}

// Hole 6: the WebDAV area was anonymous, listable and writable by all.
func TestHole06DAVNotAnonymous(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	up, refs := v.upload("alice", "alice's data\n")
	path := "/DAV/alice/" + up + "/" + refs[0].MD5
	for _, m := range []string{"GET", "HEAD", "PUT", "DELETE", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "OPTIONS"} {
		for _, p := range []string{path, "/DAV/", "/DAV/alice/"} {
			before := v.everything()
			a := v.call("", m, p, strings.NewReader("x"), "Destination", "/DAV/alice/y")
			if a.status != http.StatusUnauthorized {
				t.Errorf("anonymous %s %s: %v", m, p, a)
			}
			if v.everything() != before {
				t.Errorf("anonymous %s %s changed the server", m, p)
			}
		}
	}
	for _, m := range []string{"GET", "PROPFIND"} {
		if a := v.call("bob", m, "/DAV/", nil, "Depth", "1"); a.ok() || strings.Contains(a.body, "alice") {
			t.Errorf("bob lists all areas: %v", a)
		}
	}
}

// Hole 7: credentials in plain text (the database password in the CGI and
// on command lines). Tokens are stored only as hashes: nothing under the
// server root holds one, even after use.
func TestHole07NoPlainSecretsStored(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "g", "c", 1)
	v.call("alice", "GET", api+"/status", nil)
	for user, tok := range v.tokens {
		filepath.WalkDir(v.e.Root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<26)
			for sc.Scan() {
				if strings.Contains(sc.Text(), tok) {
					t.Errorf("%s's token in plain text in %s", user, p)
					break
				}
			}
			return nil
		})
	}
}

// Hole 8: a password hash file was committed. The repository holds no
// password files, htpasswd/htdigest entries or private keys.
func TestHole08NoCommittedCredentials(t *testing.T) {
	t.Parallel()
	repo, _ := filepath.Abs("../..")
	digest := regexp.MustCompile(`(?m)^[A-Za-z0-9_.-]+:[^:\s]*:[0-9a-f]{32}\s*$`)
	passwd := regexp.MustCompile(`(?m)^[A-Za-z0-9_.-]+:(\$apr1\$|\$2[aby]\$|\{SHA\}[A-Za-z0-9+/=]{20,})`)
	key := regexp.MustCompile(`-----BEGIN ([A-Z]+ )?PRIVATE KEY-----`)
	n := 0
	filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(repo, p)
		if low := strings.ToLower(d.Name()); strings.HasSuffix(low, "passwd") || strings.HasSuffix(low, "htdigest") || strings.HasSuffix(low, ".pem") || strings.HasSuffix(low, ".key") {
			t.Errorf("a password file in the repository: %s", rel)
		}
		if fi, _ := d.Info(); fi == nil || fi.Size() > 4<<20 || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		n++
		for _, re := range []*regexp.Regexp{digest, passwd, key} {
			if m := re.Find(data); m != nil {
				t.Errorf("%s holds what looks like a credential: %.40q", rel, m)
			}
		}
		return nil
	})
	if n < 50 {
		t.Fatalf("scanned only %d files under %s", n, repo)
	}
}

// Hole 10: no quotas, no upload size limit, no file-name whitelist, any
// priority. (TestQuotas and TestUploadSizeLimits cover each in depth.)
func TestHole10Limits(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.e.Cfg.MaxUploadBytes = 100
	v.e.Cfg.MaxRunningChains = 1
	v.e.Cfg.MaxPriority = 5
	up := v.newUpload("alice")
	big := strings.Repeat("z", 101)
	refusedClearly(t, "upload over the limit", v.call("alice", "PUT", up.DAVPath+md5of(big), chunked{strings.NewReader(big)}), 413, "100 bytes")
	refusedClearly(t, "hidden name", v.call("alice", "PUT", up.DAVPath+".htaccess", strings.NewReader("x")), 400, "hidden")
	v.submit("alice", "g", "c1", 1)
	up2, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	refusedClearly(t, "second chain", v.post("alice", api+"/submit", langevin("g", "c2", up2, 1, refs[0], refs[1])), 403, "limit is 1")
	v.e.Cfg.MaxRunningChains = 0
	r := langevin("g", "c2", up2, 1, refs[0], refs[1])
	p := 1000
	r.Options.Priority = &p
	refusedClearly(t, "priority", v.post("alice", api+"/submit", r), 403, "priority 1000")
}

// Hole 11: purge while work units are in BOINC. Here that is safe: the
// work unit's outputs are dropped when it ends, no next step is created,
// and a new chain of the same name gets a new tag (hole 21).
func TestHole11PurgeWhileRunning(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	c := v.submit("alice", "g", "c", 3)
	wu := c.Chains[0].FirstWU
	if a := v.post("alice", api+"/purge", wire.ChainRef{Group: "g"}); !a.ok() {
		t.Fatal(a)
	}
	v.finish(wu) // BOINC finishes the work unit after the purge
	if got := tree(filepath.Join(v.e.Root, "results")); len(got) > 1 {
		t.Errorf("results kept after purge: %v", got)
	}
	if n := v.boincWUs("c-ALICE\\_g-1-%"); n != 0 {
		t.Errorf("a next step was created after purge")
	}
	if a := v.call("alice", "GET", api+"/status?group=g", nil); a.status != 404 {
		t.Errorf("status after purge: %v", a)
	}
	c2 := v.submit("alice", "g", "c", 3)
	if c2.Chains[0].FirstWU == wu {
		t.Errorf("resubmission reuses the work-unit name %s", wu)
	}
	if err := v.hookCall(boinc.HookCall{WUName: wu, Error: true, ErrorMask: 1}); err != nil {
		t.Errorf("failure hook for the purged chain: %v", err)
	}
}

// Hole R30: upload ids had 10^6 values, chosen by the client, without
// exclusive creation. Here the server chooses 128 random bits, each id is
// new, and only its owner can use it.
func TestHoleR30UploadIDs(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.e.Cfg.MaxOpenUploads = 0 // 200 ids, past the default cap of open uploads
	seen := map[string]bool{}
	idRE := regexp.MustCompile(`^up[0-9a-f]{32}$`)
	for range 200 {
		up := v.newUpload("alice")
		if !idRE.MatchString(up.ID) || seen[up.ID] || up.DAVPath != "/DAV/alice/"+up.ID+"/" {
			t.Fatalf("upload %+v", up)
		}
		seen[up.ID] = true
	}
}
