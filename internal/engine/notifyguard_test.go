package engine_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// addEvent records one event of the user, as a chain transition would.
func addEvent(t *testing.T, e *engine.Engine, userID int64, typ, group, name string) {
	t.Helper()
	if _, err := e.State().SQL().ExecContext(context.Background(), `INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES (?,?,?,?,?,?,'')`,
		time.Now().Unix(), userID, typ, group, name, -1); err != nil {
		t.Fatal(err)
	}
}

// lastErrors are the outbox's recorded failures, by target address.
func lastErrors(t *testing.T, e *engine.Engine) map[string]string {
	t.Helper()
	rows, err := e.State().SQL().QueryContext(context.Background(), `SELECT t.address, o.last_error FROM notify_outbox o JOIN notify_targets t ON t.id = o.target_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var a, le string
		if err := rows.Scan(&a, &le); err != nil {
			t.Fatal(err)
		}
		out[a] = le
	}
	return out
}

// countingListener counts the connections made to it, answering 200.
func countingServer(t *testing.T, network, addr string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestWebhookRefusedAtConnectTime: targets that got into the database
// (registered before the check, or a name that resolved elsewhere at
// registration) are refused when dialled: a name resolving to loopback,
// [::1], 127.0.0.1, 169.254.169.254 and a 10.x address. Nothing connects.
func TestWebhookRefusedAtConnectTime(t *testing.T) {
	defer engine.SetNotifyRetry(time.Hour)()
	f := newFixture(t)
	v4, n4 := countingServer(t, "tcp4", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(v4.URL, "http://"))
	targets := map[string]string{
		"http://localhost:" + port + "/h": "localhost (resolved to 127.0.0.1) is a loopback address",
		"http://127.0.0.1:" + port + "/h": "127.0.0.1 is a loopback address",
		"http://169.254.169.254/latest":   "169.254.169.254 is link-local",
		"http://10.11.12.13:8080/h":       "10.11.12.13 is private",
	}
	var n6 *atomic.Int64
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		v6, c := countingServer(t, "tcp6", "[::1]:0")
		n6 = c
		targets[v6.URL+"/h"] = "::1 is a loopback address"
	}
	for a := range targets {
		if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook, Address: a, Events: []string{"all"}}); err != nil {
			t.Fatal(err)
		}
	}
	addEvent(t, f.e, f.u.ID, store.EvChainDone, "g", "c1")
	start := time.Now()
	for range 2 { // one user's deliveries go a few at a time
		if _, err := f.e.NotifyPass(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if n4.Load() != 0 || (n6 != nil && n6.Load() != 0) {
		t.Fatalf("the server connected to loopback: %d times on IPv4, %d on IPv6", n4.Load(), n6.Load())
	}
	errs := lastErrors(t, f.e)
	for a, want := range targets {
		if !strings.Contains(errs[a], want) || !strings.Contains(errs[a], `"notify_allow"`) {
			t.Errorf("%s: recorded failure %q, want %q and the setting", a, errs[a], want)
		}
	}
}

// TestWebhookRedirectNotFollowed: a target that answers with a redirect
// (to loopback, even where loopback is allowed) is not followed.
func TestWebhookRedirectNotFollowed(t *testing.T) {
	defer engine.SetNotifyRetry(time.Hour)()
	f := newFixture(t)
	allowLoopback(f.e)
	inner, hits := countingServer(t, "tcp4", "127.0.0.1:0")
	for i, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redir := httptest.NewServer(http.RedirectHandler(inner.URL+"/admin", code))
		defer redir.Close()
		addr := redir.URL + "/h" + string(rune('a'+i))
		if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook, Address: addr, Events: []string{"all"}}); err != nil {
			t.Fatal(err)
		}
	}
	addEvent(t, f.e, f.u.ID, store.EvChainDone, "g", "c1")
	if _, err := f.e.NotifyPass(f.ctx); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 0 {
		t.Fatalf("a redirect was followed: %d connections to its target", hits.Load())
	}
	for a, le := range lastErrors(t, f.e) {
		if !strings.Contains(le, "the webhook answered 30") {
			t.Errorf("%s: %q, want the redirect counted as a failure", a, le)
		}
	}
}

// submitNotify submits one chain of group with -notify targets and
// checks the outcome's kind (KindInternal: none expected).
func (f *fixture) submitNotify(t *testing.T, group string, targets []string, want engine.Kind) {
	t.Helper()
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up,
		Options: wire.Options{Notify: targets},
		Chains:  []wire.ChainSpec{{Name: "n1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if want == engine.KindInternal && err != nil || want != engine.KindInternal && engine.KindOf(err) != want {
		t.Fatalf("submission with -notify %v: %v (kind %d), want kind %d", targets, err, engine.KindOf(err), want)
	}
}

// TestNotifyConfigChecked: rboinc.json's notify_allow and
// max_notify_targets are checked when read; the default bound is 32.
func TestNotifyConfigChecked(t *testing.T) {
	f := newFixture(t)
	if f.e.Cfg.MaxNotifyTargets != engine.DefaultMaxNotifyTargets || engine.DefaultMaxNotifyTargets != 32 {
		t.Fatalf("max_notify_targets %d by default", f.e.Cfg.MaxNotifyTargets)
	}
	path := filepath.Join(f.root, engine.ConfigFile)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for set, want := range map[string]string{
		`"notify_allow": ["10.0.0.0/33"]`:     "notify_allow",
		`"notify_allow": ["http://x/"]`:       "notify_allow",
		`"max_notify_targets": -1`:            "max_notify_targets",
		`"notify_allow": ["127.0.0.0/8", ""]`: "empty",
	} {
		b := strings.Replace(string(orig), "{", "{"+set+",", 1)
		if strings.HasPrefix(set, `"max_notify_targets"`) { // the key is there: the last one counts
			b = strings.Replace(string(orig), `"max_notify_targets": 32`, set, 1)
		}
		if err := os.WriteFile(path, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := engine.LoadConfig(f.root); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", set, err, want)
		}
	}
	b := strings.Replace(string(orig), "{", `{"notify_allow": ["127.0.0.0/8", "hooks.internal"], `, 1)
	os.WriteFile(path, []byte(b), 0o600)
	if c, err := engine.LoadConfig(f.root); err != nil || len(c.NotifyAllow) != 2 {
		t.Fatalf("%+v %v", c.NotifyAllow, err)
	}
}
