package engine_test

import (
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/workflow/wire"
)

func ref(content string) wire.FileRef {
	s := md5.Sum([]byte(content))
	return wire.FileRef{MD5: hex.EncodeToString(s[:]), Size: int64(len(content))}
}

// inlineRequest is n chains, each with its own coordinates and one shared
// velocities file, all of them inline (one of them large enough to be
// streamed rather than read whole), plus the body carrying them.
func inlineRequest(group string, n int) (wire.SubmitRequest, []string) {
	vel := strings.Repeat("0.5 0 0\n", 40000) // 320 kB
	req := wire.SubmitRequest{Queue: "langevin", Group: group, Options: wire.Options{NumSteps: 2}}
	contents := []string{vel}
	req.Inline = append(req.Inline, ref(vel))
	for i := range n {
		coor := fmt.Sprintf("%d 0 0\n", i)
		contents = append(contents, coor)
		req.Inline = append(req.Inline, ref(coor))
		req.Chains = append(req.Chains, wire.ChainSpec{Name: fmt.Sprint("c", i), Files: map[string]wire.FileRef{"coor_file": ref(coor), "vel_file": ref(vel)}})
	}
	return req, contents
}

func TestSubmitInline(t *testing.T) {
	f := newFixture(t)
	runs := f.countCreateWork()
	req, contents := inlineRequest("g", 150)
	// One content is on the server already: its bytes are read past.
	if _, _, err := f.e.Pool.WriteContent(strings.NewReader(contents[7])); err != nil {
		t.Fatal(err)
	}
	resp, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(strings.Join(contents, "")))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Chains) != 150 || runs() != 1 {
		t.Fatalf("%d chains, %d create_work runs", len(resp.Chains), runs())
	}
	for _, c := range resp.Chains {
		if f.boincWUs(c.FirstWU) != 1 {
			t.Fatalf("no work unit %s", c.FirstWU)
		}
	}
	for i, c := range contents {
		r := ref(c)
		if sum, n, err := md5sum.File(f.e.Pool.Path(r.MD5)); err != nil || sum != r.MD5 || n != r.Size {
			t.Fatalf("content %d in the pool: %s %d %v", i, sum, n, err)
		}
		staged := f.e.Proj.DownloadPath(pool.PhysicalName(r.MD5))
		if sum, n, ok := boinc.ReadSidecar(staged); !ok || sum != r.MD5 || n != r.Size {
			t.Fatalf("content %d staged with sidecar %s %d %v", i, sum, n, ok)
		}
	}
	if missing, _ := f.e.State().PoolMissing(f.ctx, f.u.ID, []string{req.Inline[0].MD5, req.Inline[150].MD5}); len(missing) != 0 {
		t.Fatalf("contents not recorded in the pool index: %v", missing)
	}
}

func TestSubmitInlineRefusesBadContents(t *testing.T) {
	f := newFixture(t)
	req, contents := inlineRequest("g", 3)
	body := strings.Join(contents, "")
	bad := []byte(body)
	bad[len(bad)-2] = '9' // the last chain's coordinates
	trailing := body + "x"
	truncated := body[:len(body)-3]
	for _, tc := range []struct {
		name string
		req  func(wire.SubmitRequest) wire.SubmitRequest
		body string
		kind engine.Kind
		want string
	}{
		{"damaged", nil, string(bad), engine.KindBadRequest, "the bytes sent have MD5"},
		{"trailing data", nil, trailing, engine.KindBadRequest, "goes on after its 4 inline contents"},
		{"truncated", nil, truncated, engine.KindBadRequest, "ended inside inline content " + req.Inline[3].MD5},
		{"unused", func(r wire.SubmitRequest) wire.SubmitRequest {
			r.Inline = append(r.Inline[:len(r.Inline):len(r.Inline)], ref("x"))
			return r
		}, body + "x", engine.KindBadRequest, "is no input of any chain"},
		{"twice", func(r wire.SubmitRequest) wire.SubmitRequest {
			r.Inline = append(r.Inline[:len(r.Inline):len(r.Inline)], r.Inline[1])
			return r
		}, body + contents[1], engine.KindBadRequest, "is sent twice"},
		{"size differs", func(r wire.SubmitRequest) wire.SubmitRequest {
			in := append([]wire.FileRef(nil), r.Inline...)
			in[1].Size++
			r.Inline = in
			return r
		}, body, engine.KindBadRequest, "differs from the"},
	} {
		r := req
		if tc.req != nil {
			r = tc.req(req)
		}
		_, err := f.e.SubmitInline(f.ctx, f.u, r, strings.NewReader(tc.body))
		if err == nil || engine.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (kind %v), want %q", tc.name, err, engine.KindOf(err), tc.want)
		}
		if cs, _ := f.e.State().Chains(f.ctx, f.u.ID, "g", ""); len(cs) != 0 {
			t.Fatalf("%s: a refused submission left %d chains", tc.name, len(cs))
		}
	}
	// The damaged content never entered the pool under its name.
	if f.e.Pool.Has(req.Inline[3].MD5) {
		if sum, _, _ := md5sum.File(f.e.Pool.Path(req.Inline[3].MD5)); sum != req.Inline[3].MD5 {
			t.Fatal("the pool holds a content under another content's name")
		}
	}
	// Inline contents belong to the streamed request only.
	if _, err := f.e.Submit(f.ctx, f.u, req); err == nil || !strings.Contains(err.Error(), wire.PathSubmitInline) {
		t.Fatalf("inline contents on the plain path: %v", err)
	}
	f.e.Cfg.MaxUploadBytes = 1000
	if _, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(body)); engine.KindOf(err) != engine.KindTooLarge {
		t.Fatalf("inline content over max_upload_bytes: %v", err)
	}
}

// A submission that fails while its chains are recorded has already fed
// create_work some of its jobs: it must create none of the work units.
func TestFailedRecordingCreatesNoWorkUnit(t *testing.T) {
	f := newFixture(t)
	f.submit("g", "taken", 1)
	// The same contents once before, so that staging is quick and the jobs
	// of the first chains reach create_work long before the last one fails.
	req, contents := inlineRequest("a", 400)
	if _, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(strings.Join(contents, ""))); err != nil {
		t.Fatal(err)
	}
	before := f.allWUs()
	req = wire.SubmitRequest{Queue: req.Queue, Group: "g", Options: req.Options, Chains: req.Chains}
	req.Chains[len(req.Chains)-1].Name = "taken"
	_, err := f.e.Submit(f.ctx, f.u, req)
	if engine.KindOf(err) != engine.KindNameTaken || !strings.Contains(err.Error(), "chain taken in group g") {
		t.Fatalf("got %v", err)
	}
	if n := f.allWUs(); n != before {
		t.Fatalf("%d work units after the failed submission, %d before", n, before)
	}
	if cs, _ := f.e.State().Chains(f.ctx, f.u.ID, "g", ""); len(cs) != 1 {
		t.Fatalf("%d chains in the group, want the first one only", len(cs))
	}
	req.Chains[len(req.Chains)-1].Name = "last"
	resp, err := f.e.Submit(f.ctx, f.u, req)
	if err != nil || len(resp.Chains) != 400 || f.allWUs() != before+400 {
		t.Fatalf("second attempt: %d chains, %v", len(resp.Chains), err)
	}
}

// allWUs counts the work units of the stand-in's database.
func (f *fixture) allWUs() int {
	f.t.Helper()
	var n int
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT count(*) FROM workunit`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}
