package server_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
)

// TestLostAnswerRetrySucceeds: the server records a submission and dies
// before answering (here: its connection is closed once the real handler
// has committed). The client tries again, and the same submission is
// answered with the chains it made: success, nothing made twice. A
// different submission under the same name is still refused.
func TestLostAnswerRetrySucceeds(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	h := v.srv.Config.Handler
	// The answer lost is the first that accepts the submission (a first
	// submission is refused once, its missing contents listed, before it
	// comes with them); after it come the retries.
	var lost atomic.Bool
	var after atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/submit") && lost.Load() {
			after.Add(1)
		} else if strings.Contains(r.URL.Path, "/submit") {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code/100 == 2 { // committed...
				lost.Store(true)
				hj, _ := w.(http.Hijacker)
				conn, _, _ := hj.Hijack()
				conn.Close() // ...and the answer never leaves
				return
			}
			maps.Copy(w.Header(), rec.Header())
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	coor, vel := filepath.Join(dir, "x.coor"), filepath.Join(dir, "x.vel")
	os.WriteFile(coor, []byte("1 2 3\n"), 0o644)
	os.WriteFile(vel, []byte("0 0 0\n"), 0o644)
	cl, err := client.New(srv.URL+"/rboinc_cgi", v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	cl.Retry.First = time.Millisecond
	in := client.SubmitInput{Queue: "langevin", Group: "g",
		Chains: []client.Chain{{Name: "c1", Files: map[string]string{"coor_file": coor, "vel_file": vel}}}}
	rep, err := cl.SubmitChains(t.Context(), in)
	if err != nil {
		t.Fatalf("the retry after a lost answer failed: %v (exit %d)", err, client.ExitCode(err))
	}
	if !lost.Load() || after.Load() != 1 || !rep.AlreadySubmitted || len(rep.Chains) != 1 || !rep.Chains[0].Existing {
		t.Fatalf("answer lost: %v, then %d submissions sent; report %+v", lost.Load(), after.Load(), rep)
	}
	if n := v.chainCount(); n != 1 {
		t.Fatalf("%d chains recorded, want 1", n)
	}
	if n := v.boincWUs("c1-ALICE\\_g-0-%"); n != 1 {
		t.Fatalf("%d work units in BOINC, want 1", n)
	}
	if !strings.HasPrefix(rep.Chains[0].FirstWU, "c1-ALICE_g-0-2-RND") && !strings.HasPrefix(rep.Chains[0].FirstWU, "c1-ALICE_g-0-1-RND") {
		t.Fatalf("first work unit %q", rep.Chains[0].FirstWU)
	}
	// The same command once more: still success, still one chain.
	if rep, err = cl.SubmitChains(t.Context(), in); err != nil || !rep.AlreadySubmitted {
		t.Fatalf("a third identical submission: %+v %v", rep, err)
	}
	// Different inputs under the taken name: refused as before.
	os.WriteFile(coor, []byte("9 9 9\n"), 0o644)
	if _, err := cl.SubmitChains(t.Context(), in); client.ExitCode(err) != client.ExitRefused || !strings.Contains(err.Error(), "already") && !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a different chain under a taken name: %v (exit %d)", err, client.ExitCode(err))
	}
	if n := v.chainCount(); n != 1 {
		t.Fatalf("%d chains recorded, want 1", n)
	}
}
