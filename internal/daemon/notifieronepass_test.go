package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/workflow/wire"
)

// `rboinc-server notifier --one_pass` sends every notification that is
// due, not one per target: a target gets its events one at a time, in
// order, so one claim of the outbox takes only each target's oldest.
func TestNotifierOnePassSendsAllDue(t *testing.T) {
	root, _ := newRoot(t)
	setConfig(t, root, "notify_allow", []string{"127.0.0.0/8"})
	var got atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer rc.Close()
	ctx := context.Background()
	e, u, up := aliceWithWebhook(t, root, rc.URL)
	id := u.ID
	files := map[string]wire.FileRef{}
	for p, c := range map[string]string{"coor_file": "1 2 3\n", "vel_file": "0 0 0\n"} {
		tmp := filepath.Join(t.TempDir(), "x")
		os.WriteFile(tmp, []byte(c), 0o644)
		sum, n, _ := md5sum.File(tmp)
		os.WriteFile(filepath.Join(e.DAVRoot(u), up.ID, sum), []byte(c), 0o644)
		files[p] = wire.FileRef{MD5: sum, Size: n}
	}
	req := wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up.ID, Options: wire.Options{NumSteps: 2}}
	for _, name := range []string{"c1", "c2", "c3"} {
		req.Chains = append(req.Chains, wire.ChainSpec{Name: name, Files: files})
	}
	if _, err := e.Submit(ctx, u, req); err != nil {
		t.Fatal(err)
	}
	evs, err := e.Query().Events(ctx, id, 0, 100)
	if err != nil || len(evs) < 2 {
		t.Fatalf("the submission recorded %d events (%v), want several", len(evs), err)
	}
	if err := daemon.NotifierPass(ctx, e); err != nil {
		t.Fatal(err)
	}
	if n := got.Load(); int(n) != len(evs) {
		t.Fatalf("one pass sent %d of the %d notifications due", n, len(evs))
	}
}
