package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/internal/store"
)

// verifier is a webhook receiver that checks each call as the package
// notifytarget documents (Verify), under the secret it was given.
type verifier struct {
	mu              sync.Mutex
	secret          string
	calls, accepted int
	headers         []string
}

func (v *verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls++
	v.headers = append(v.headers, r.Header.Get(notifytarget.SignatureHeader))
	if !notifytarget.Verify(v.secret, body, r.Header.Get(notifytarget.SignatureHeader)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	v.accepted++
}

func (v *verifier) counts() (calls, accepted int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls, v.accepted
}

func storedSecret(t *testing.T, e *engine.Engine, userID int64) string {
	t.Helper()
	var s string
	if err := e.State().SQL().QueryRow(`SELECT notify_secret FROM users WHERE id = ?`, userID).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSubmissionWebhookSignedWithUsersSecret: a target registered by a
// submission (never by the administrator) comes with the user's secret,
// made in the same transaction; the user reads it as the API does and
// the receiver verifies the call with it. A rotation signs the next calls
// with the new secret only.
func TestSubmissionWebhookSignedWithUsersSecret(t *testing.T) {
	defer engine.SetNotifyRetry(time.Hour)()
	f := newFixture(t)
	allowLoopback(f.e)
	v := &verifier{}
	srv := httptest.NewServer(v)
	defer srv.Close()
	if s := storedSecret(t, f.e, f.u.ID); s != "" {
		t.Fatalf("a new user has a secret already: %q", s)
	}
	f.submitNotify(t, "g", []string{srv.URL + "/hook"}, engine.KindInternal)
	if s := storedSecret(t, f.e, f.u.ID); len(s) != 64 {
		t.Fatalf("after the submission registered a webhook the user's secret is %q, want one made with the target", s)
	}
	sec, err := f.e.NotifySecret(f.ctx, f.u)
	if err != nil {
		t.Fatal(err)
	}
	v.secret = sec.Secret
	addEvent(t, f.e, f.u.ID, store.EvChainDone, "g", "n1")
	drain(t, f.e, 10)
	if calls, ok := v.counts(); calls != 1 || ok != 1 {
		t.Fatalf("%d calls, %d verified; want 1 verified", calls, ok)
	}
	// Under the empty key, the signature the server sends differs.
	if h := v.headers[0]; h == engine.Sign("", []byte("x")) || notifytarget.Verify("", nil, h) {
		t.Fatalf("signature %q", h)
	}

	rot, err := f.e.RotateNotifySecret(f.ctx, f.u, struct{}{})
	if err != nil || rot.Secret == sec.Secret || len(rot.Secret) != 64 {
		t.Fatalf("rotation gave %q, %v", rot.Secret, err)
	}
	addEvent(t, f.e, f.u.ID, store.EvGroupDone, "g", "")
	f.e.NotifyPass(f.ctx)
	if calls, ok := v.counts(); calls != 2 || ok != 1 {
		t.Fatalf("after rotation: %d calls, %d verified under the old secret; want the new call refused", calls, ok)
	}
	if !notifytarget.Verify(rot.Secret, nil, engine.Sign(rot.Secret, nil)) {
		t.Fatal("the rotated secret does not verify its own signature")
	}
}

// TestNothingSentWithEmptySecret: should a user's secret be empty (a
// database edited by hand, a defect), their webhooks are not called: the
// delivery fails with a reason and waits.
func TestNothingSentWithEmptySecret(t *testing.T) {
	defer engine.SetNotifyRetry(time.Hour)()
	f := newFixture(t)
	allowLoopback(f.e)
	v := &verifier{}
	srv := httptest.NewServer(v)
	defer srv.Close()
	if err := f.e.State().AddNotifyTarget(f.ctx, store.NotifyTarget{UserID: f.u.ID, Kind: store.NotifyWebhook, Address: srv.URL, Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.State().SQL().Exec(`UPDATE users SET notify_secret = '' WHERE id = ?`, f.u.ID); err != nil {
		t.Fatal(err)
	}
	addEvent(t, f.e, f.u.ID, store.EvChainDone, "g", "c")
	if _, err := f.e.NotifyPass(f.ctx); err != nil {
		t.Fatal(err)
	}
	if calls, _ := v.counts(); calls != 0 {
		t.Fatalf("%d webhook calls signed with the empty key", calls)
	}
	if le := lastErrors(t, f.e)[srv.URL]; !strings.Contains(le, "no webhook signing secret") {
		t.Fatalf("recorded failure %q", le)
	}
}
