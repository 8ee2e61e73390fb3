package server_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/workflow/wire"
)

// noRedirect is a client that shows redirects instead of following them,
// so a test sees exactly what the server answered.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// answer is a response with its body read.
type answer struct {
	status int
	body   string
	err    wire.Error
	hdr    http.Header
}

func (a answer) ok() bool { return a.status/100 == 2 }

func (a answer) String() string { return fmt.Sprintf("%d %s", a.status, strings.TrimSpace(a.body)) }

// call sends one request as user ("" for none) with extra headers.
func (v *env) call(user, method, path string, body io.Reader, hdr ...string) answer {
	v.t.Helper()
	req, err := http.NewRequest(method, v.srv.URL+path, body)
	if err != nil {
		// Some hostile paths are not even valid URLs for the client;
		// send them raw.
		req, err = http.NewRequest(method, v.srv.URL+"/", body)
		if err != nil {
			v.t.Fatal(err)
		}
		req.URL.Opaque = path
	}
	if user != "" {
		req.Header.Set("Authorization", "Bearer "+v.tokens[user])
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		v.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: string(b), hdr: resp.Header}
	json.Unmarshal(b, &a.err)
	return a
}

// post sends v as JSON.
func (v *env) post(user, path string, body any) answer {
	v.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	return v.call(user, "POST", path, r, "Content-Type", "application/json")
}

func md5of(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// newUpload makes a fresh upload collection of user's.
func (v *env) newUpload(user string) wire.UploadResponse {
	v.t.Helper()
	a := v.call(user, "POST", "/rboinc_cgi/api/v1/uploads", nil)
	var up wire.UploadResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &up) != nil {
		v.t.Fatalf("new upload: %v", a)
	}
	return up
}

// upload PUTs contents into a fresh collection, as rboinc-submit does.
func (v *env) upload(user string, contents ...string) (string, []wire.FileRef) {
	v.t.Helper()
	up := v.newUpload(user)
	var refs []wire.FileRef
	for _, c := range contents {
		if a := v.call(user, "PUT", up.DAVPath+md5of(c), strings.NewReader(c)); a.status != http.StatusCreated {
			v.t.Fatalf("PUT: %v", a)
		}
		refs = append(refs, wire.FileRef{MD5: md5of(c), Size: int64(len(c))})
	}
	return up.ID, refs
}

// langevin is a submission of one langevin chain with these inputs.
func langevin(group, name, upload string, steps int, coor, vel wire.FileRef) wire.SubmitRequest {
	return wire.SubmitRequest{Queue: "langevin", Group: group, Upload: upload, Options: wire.Options{NumSteps: steps},
		Chains: []wire.ChainSpec{{Name: name, Files: map[string]wire.FileRef{"coor_file": coor, "vel_file": vel}}}}
}

// submit creates one chain of user's, uploading its two inputs.
func (v *env) submit(user, group, name string, steps int) wire.SubmitResponse {
	v.t.Helper()
	up, refs := v.upload(user, "1 2 3\n", "0 0 0\n")
	a := v.post(user, "/rboinc_cgi/api/v1/submit", langevin(group, name, up, steps, refs[0], refs[1]))
	var resp wire.SubmitResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &resp) != nil || len(resp.Chains) != 1 {
		v.t.Fatalf("submit %s/%s as %s: %v", group, name, user, a)
	}
	return resp
}

// finish plays BOINC finishing a work unit: outputs in the upload
// hierarchy, then the hook.
func (v *env) finish(wu string) {
	v.t.Helper()
	var paths []string
	for k, c := range []string{"4 5 6\n", "0.1 0.1 0.1\n", "log\n"} {
		p := v.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(c), 0o644)
		paths = append(paths, p)
	}
	if err := v.hookCall(boinc.HookCall{WUName: wu, Files: paths}); err != nil {
		v.t.Fatal(err)
	}
}

// hookCall is a hook call as production makes it: spooled with its outputs
// (spool.Accept, the front half of rboinc-hook), then taken in by the
// creator's pass, which records it and creates the next step.
func (v *env) hookCall(call boinc.HookCall) error {
	if _, err := spool.Accept(v.e.Root, call); err != nil {
		return err
	}
	return v.e.CreatorPass(context.Background())
}

// tree lists the files under dir (relative name, size, MD5; symlinks by
// target), or nothing when dir does not exist.
func tree(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			out = append(out, rel+" -> "+t)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			sum, n, _ := md5sum.File(p)
			out = append(out, fmt.Sprintf("%s %d %s", rel, n, sum))
		}
		return nil
	})
	return out
}

// state is everything of user's that another user's request must leave
// alone: their chains and steps and results in the database, their result
// and scratch files, their work units in BOINC, and the content pool.
func (v *env) state(user string) string {
	v.t.Helper()
	ctx := context.Background()
	u, err := v.db.UserByName(ctx, user)
	if err != nil {
		v.t.Fatal(err)
	}
	var b strings.Builder
	db := v.db.SQL()
	dump := func(q string, args ...any) {
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			v.t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			fmt.Fprintln(&b, vals...)
		}
	}
	dump(`SELECT id, grp, name, state, steps_done, nsteps, tag, error FROM chains WHERE user_id = ? ORDER BY id`, u.ID)
	dump(`SELECT s.wu_name, s.state FROM steps s JOIN chains c ON c.id = s.chain_id WHERE c.user_id = ? ORDER BY s.wu_name`, u.ID)
	dump(`SELECT r.file, r.md5, r.acked FROM results r JOIN chains c ON c.id = r.chain_id WHERE c.user_id = ? ORDER BY r.file`, u.ID)
	dump(`SELECT id FROM uploads WHERE user_id = ? ORDER BY id`, u.ID)
	dump(`SELECT name, disabled, token_hash FROM users WHERE id = ?`, u.ID)
	ents, _ := os.ReadDir(filepath.Join(v.e.Root, "results"))
	var dirs []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), strings.ToUpper(user)+"_") {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		fmt.Fprintln(&b, "results", d, tree(filepath.Join(v.e.Root, "results", d)))
	}
	fmt.Fprintln(&b, "dav", tree(v.e.DAVRoot(u)))
	fmt.Fprintln(&b, "pool", tree(filepath.Join(v.e.Root, "pool")))
	sdb, err := sql.Open("sqlite", filepath.Join(v.e.Proj.Dir, "standin.db"))
	if err != nil {
		v.t.Fatal(err)
	}
	defer sdb.Close()
	var n int
	sdb.QueryRow(`SELECT count(*) FROM workunit WHERE name LIKE ? ESCAPE '\'`, "%-"+strings.ToUpper(user)+"\\_%").Scan(&n)
	fmt.Fprintln(&b, "boinc work units", n)
	return b.String()
}

// chainCount counts all chains of all users.
func (v *env) chainCount() int {
	var n int
	v.db.SQL().QueryRow(`SELECT count(*) FROM chains`).Scan(&n)
	return n
}

// unchanged fails the test when user's state differs from before.
func (v *env) unchanged(t *testing.T, what, user, before string) {
	t.Helper()
	if after := v.state(user); after != before {
		t.Errorf("%s changed %s's state:\nbefore:\n%s\nafter:\n%s", what, user, before, after)
	}
}

func hashTok(tok string) string { return server.HashToken(tok) }

// boincWUs counts the stand-in's work units whose name is LIKE pattern
// (with \ as escape).
func (v *env) boincWUs(pattern string) int {
	v.t.Helper()
	sdb, err := sql.Open("sqlite", filepath.Join(v.e.Proj.Dir, "standin.db"))
	if err != nil {
		v.t.Fatal(err)
	}
	defer sdb.Close()
	var n int
	if err := sdb.QueryRow(`SELECT count(*) FROM workunit WHERE name LIKE ? ESCAPE '\'`, pattern).Scan(&n); err != nil {
		v.t.Fatal(err)
	}
	return n
}
