package engine_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/smtptest"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// receiver is a webhook endpoint that checks each call's signature by the
// HMAC definition (not by engine.Sign) and counts the events it got.
type receiver struct {
	t      *testing.T
	secret string
	down   atomic.Bool
	mu     sync.Mutex
	got    []int64
	bad    int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if r.down.Load() {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	m := hmac.New(sha256.New, []byte(r.secret))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	var ev store.NotifyPayload
	r.mu.Lock()
	defer r.mu.Unlock()
	if !hmac.Equal([]byte(req.Header.Get("X-Rboinc-Signature")), []byte(want)) || json.Unmarshal(body, &ev) != nil ||
		req.Header.Get("X-Rboinc-Event") != ev.Type || req.Method != http.MethodPost {
		r.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	r.got = append(r.got, ev.ID)
}

func (r *receiver) ids() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// drain runs notifier passes until the outbox is empty (or fails the test).
func drain(t *testing.T, e *engine.Engine, passes int) {
	t.Helper()
	for range passes {
		if _, err := e.NotifyPass(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n, _, err := e.State().OutboxWaiting(context.Background()); err != nil || n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	n, _, _ := e.State().OutboxWaiting(context.Background())
	t.Fatalf("%d notifications still waiting after %d passes", n, passes)
}

// runChains submits chains of two steps and plays BOINC finishing them.
func runChains(f *fixture, group string, names ...string) {
	for _, n := range names {
		wu := f.submit(group, n, 2).Chains[0].FirstWU
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			f.t.Fatal(err)
		}
	}
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	for _, n := range names {
		st, err := f.e.Status(f.ctx, f.u, group, n)
		if err != nil {
			f.t.Fatal(err)
		}
		wu := st.Chains[0].WU
		if wu == "" {
			f.t.Fatalf("chain %s has no current work unit: %+v", n, st.Chains[0])
		}
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			f.t.Fatal(err)
		}
	}
}

// allowLoopback lets the engine's webhooks reach the test's receivers,
// as an administrator's notify_allow would.
func allowLoopback(e *engine.Engine) { e.Cfg.NotifyAllow = []string{"127.0.0.0/8", "::1/128"} }

func TestWebhookGetsEveryEventOnceAcrossRestartAndOutage(t *testing.T) {
	defer engine.SetNotifyRetry(0)()
	f := newFixture(t)
	allowLoopback(f.e)
	secret, err := f.e.State().NotifySecret(f.ctx, f.u.ID)
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{t: t, secret: secret}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook, Address: srv.URL + "/hook", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	// Half the chains run while the receiver is down: those deliveries
	// fail and wait in the outbox.
	rc.down.Store(true)
	runChains(f, "g", "a1", "a2")
	for range 3 {
		if _, err := f.e.NotifyPass(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(rc.ids()) != 0 {
		t.Fatalf("a down receiver counted deliveries: %v", rc.ids())
	}
	waiting, _, _ := f.e.State().OutboxWaiting(f.ctx)
	if waiting == 0 {
		t.Fatal("nothing waits in the outbox while the receiver is down")
	}
	// The server restarts: a new engine on the same root.
	f.e.Close()
	e2, err := engine.Open(f.ctx, f.root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	allowLoopback(e2)
	f.e = e2
	rc.down.Store(false)
	runChains(f, "g", "b1")
	drain(t, e2, 50)

	events, err := e2.State().Events(f.ctx, f.u.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, e := range events {
		want = append(want, e.ID)
	}
	got := rc.ids()
	if !slices.Equal(got, want) {
		t.Fatalf("the webhook got events %v, want each of %v once, in order", got, want)
	}
	if rc.bad != 0 {
		t.Fatalf("%d calls failed the signature check", rc.bad)
	}
	types := map[string]bool{}
	for _, e := range events {
		types[e.Type] = true
	}
	for _, ty := range []string{store.EvStepCreated, store.EvStepDone, store.EvChainDone, store.EvGroupDone} {
		if !types[ty] {
			t.Errorf("no %s event among %v", ty, events)
		}
	}
}

func TestDeadWebhookDelaysNothingElse(t *testing.T) {
	defer engine.SetNotifyRetry(time.Hour)()
	f := newFixture(t)
	allowLoopback(f.e)
	secret, _ := f.e.State().NotifySecret(f.ctx, f.u.ID)
	rc := &receiver{t: t, secret: secret}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }))
	defer dead.Close()
	for _, a := range []string{dead.URL, srv.URL} {
		if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook, Address: a, Events: store.DefaultNotifyEvents}); err != nil {
			t.Fatal(err)
		}
	}
	runChains(f, "g", "c1", "c2", "c3")
	for range 6 {
		if _, err := f.e.NotifyPass(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	// 3 chain_done and 1 group_done reached the live target; the dead
	// one's first delivery waits an hour and holds up only its own.
	if got := rc.ids(); len(got) != 4 {
		t.Fatalf("the live webhook got %v, want 4 events", got)
	}
	if n, _, _ := f.e.State().OutboxWaiting(f.ctx); n != 4 {
		t.Fatalf("%d deliveries wait, want the dead target's 4", n)
	}
}

func TestEmailNotificationsThroughSMTP(t *testing.T) {
	f := newFixture(t)
	smtp := smtptest.Start(t)
	f.e.Cfg.SMTP = mail.Settings{Host: smtp.Host, Port: smtp.Port, From: "rboinc@example.org", TLS: "none"}
	if err := f.e.State().RegisterEmail(f.ctx, f.u.ID, "alice@example.org", store.EmailByAdmin); err != nil {
		t.Fatal(err)
	}
	// Registered by the submission itself, for its group.
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	if _, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "m", Upload: up,
		Options: wire.Options{NumSteps: 1, Notify: []string{"alice@example.org"}},
		Chains:  []wire.ChainSpec{{Name: "x1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.e.Status(f.ctx, f.u, "m", "x1")
	wu := st.Chains[0].WU
	// The creator and the notifier daemon, as the server runs them.
	ctx, cancel := context.WithCancel(f.ctx)
	notified := make(chan struct{})
	go func() { f.e.RunNotifier(ctx, 50*time.Millisecond); close(notified) }()
	defer func() { cancel(); <-notified }()
	done := make(chan error, 1)
	go func() { done <- f.e.RunCreator(ctx, 50*time.Millisecond, nil) }()
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
		t.Fatal(err)
	}
	msgs := smtp.Wait(2, 20*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, m := range msgs {
		subjects = append(subjects, m.Subject)
		if strings.Join(m.To, ",") != "alice@example.org" || !strings.Contains(m.Body, "Group:  m") {
			t.Errorf("message to %v:\n%s", m.To, m.Raw)
		}
	}
	slices.Sort(subjects)
	if want := []string{"rboinc: chain done m/x1", "rboinc: group done m"}; !slices.Equal(subjects, want) {
		t.Fatalf("mail subjects %q, want %q", subjects, want)
	}
}

func TestSubmissionNotifyTargetsAreChecked(t *testing.T) {
	f := newFixture(t)
	bad := map[string]string{
		"ftp://example.org/x":      "only http and https",
		"https://u:p@example.org/": "credentials",
		"not an address":           "spaces",
		"javascript:alert(1)":      "only http and https",
		// Inner addresses, by name, literal and range, with no notify_allow.
		"http://localhost:8080/h":                  `localhost (resolved to 127.0.0.1) is a loopback address: notifications are not sent there unless the administrator lists it in rboinc.json's "notify_allow"`,
		"http://[::1]:8080/h":                      `the address ::1 is a loopback address`,
		"http://127.0.0.1/h":                       `the address 127.0.0.1 is a loopback address`,
		"http://169.254.169.254/latest/meta-data/": `the address 169.254.169.254 is link-local`,
		"http://10.1.2.3/h":                        `the address 10.1.2.3 is private`,
		"http://100.64.0.7/h":                      `carrier-grade NAT`,
		"https://[fd00::5]/h":                      `unique-local`,
		"http://0.0.0.0:8080/":                     `unspecified`,
		// Mail to an address the user never confirmed.
		"victim@example.org": "victim@example.org is not confirmed",
	}
	for target, want := range bad {
		up, refs := f.upload("1 2 3\n", "0 0 0\n")
		_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "h", Upload: up,
			Options: wire.Options{Notify: []string{"https://hooks.example.org/ok", target}},
			Chains:  []wire.ChainSpec{{Name: "n1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
		if engine.KindOf(err) != engine.KindBadTarget || !strings.Contains(err.Error(), want) {
			t.Errorf("-notify %q: %v, want a refused target with %q", target, err, want)
		}
	}
	if cs, _ := f.e.State().Chains(f.ctx, f.u.ID, "h", ""); len(cs) != 0 {
		t.Fatalf("refused submissions left chains: %+v", cs)
	}
	if ts, _ := f.e.State().NotifyTargets(f.ctx, f.u.ID); len(ts) != 0 {
		t.Fatalf("refused submissions left targets: %+v", ts)
	}
	// The administrator's notify_allow lets them through.
	f.e.Cfg.NotifyAllow = []string{"127.0.0.0/8", "localhost", "10.0.0.0/8"}
	e2, err := engine.Open(f.ctx, f.root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	e2.Cfg.NotifyAllow = f.e.Cfg.NotifyAllow
	for _, ok := range []string{"http://localhost:8080/h", "http://127.0.0.1/h", "http://10.1.2.3/h"} {
		if err := e2.CheckNotifyTarget(f.ctx, f.u.ID, store.NotifyWebhook, ok); err != nil {
			t.Errorf("%s refused though notify_allow lists it: %v", ok, err)
		}
	}
	if err := e2.CheckNotifyTarget(f.ctx, f.u.ID, store.NotifyWebhook, "http://169.254.169.254/"); err == nil {
		t.Error("169.254.169.254 allowed though notify_allow does not list it")
	}
}
