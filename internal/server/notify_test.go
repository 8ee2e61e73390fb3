package server_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/smtptest"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestNotifySecretIsTheUsersOwn: each user reads and rotates their own
// signing secret, nobody else's; the answer is not cached.
func TestNotifySecretIsTheUsersOwn(t *testing.T) {
	v := newEnv(t)
	path := server.Base + wire.PathNotifySecret
	if a := v.call("", "GET", path, nil); a.status != http.StatusUnauthorized {
		t.Fatalf("unauthenticated: %v", a)
	}
	secret := func(user string) string {
		t.Helper()
		a := v.call(user, "GET", path, nil)
		var s wire.NotifySecret
		if !a.ok() || json.Unmarshal([]byte(a.body), &s) != nil || len(s.Secret) != 64 || a.hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s's secret: %v %v", user, a, a.hdr)
		}
		return s.Secret
	}
	alice, bob := secret("alice"), secret("bob")
	if alice == bob || secret("alice") != alice {
		t.Fatalf("alice %s, bob %s", alice, bob)
	}
	// A body naming another user changes nothing: the route is the caller's.
	if a := v.post("alice", server.Base+wire.PathNotifySecretRotate, `{"user":"bob"}`); a.status != http.StatusBadRequest {
		t.Fatalf("rotation with a foreign field: %v", a)
	}
	a := v.post("alice", server.Base+wire.PathNotifySecretRotate, struct{}{})
	var s wire.NotifySecret
	if !a.ok() || json.Unmarshal([]byte(a.body), &s) != nil || s.Secret == alice || len(s.Secret) != 64 {
		t.Fatalf("rotation: %v", a)
	}
	if secret("alice") != s.Secret || secret("bob") != bob {
		t.Fatal("a rotation changed the wrong secret")
	}
	if a := v.call("alice", "GET", server.Base+wire.PathNotifySecretRotate, nil); a.ok() {
		t.Fatalf("GET rotates: %v", a)
	}
}

// TestEmailConfirmationOverHTTP: the code is mailed to the address (a
// real SMTP server), given back over the API; a refused target answers
// bad_notify_target.
func TestEmailConfirmationOverHTTP(t *testing.T) {
	v := newEnv(t)
	smtp := smtptest.Start(t)
	v.e.Cfg.SMTP = mail.Settings{Host: smtp.Host, Port: smtp.Port, From: "rboinc@example.org", TLS: "none"}
	path := server.Base + wire.PathNotifyEmail
	if a := v.post("alice", path, wire.EmailConfirmation{Address: "https://example.org/"}); a.status != http.StatusBadRequest || a.err.Code != wire.CodeBadNotifyTarget {
		t.Fatalf("a URL as address: %v", a)
	}
	if a := v.post("alice", path, wire.EmailConfirmation{Address: "alice@example.org"}); !a.ok() {
		t.Fatalf("asking a code: %v", a)
	}
	msgs := smtp.Wait(1, 10*time.Second)
	code := regexp.MustCompile(`-code ([0-9]{8})`).FindStringSubmatch(msgs[0].Body)
	if code == nil || strings.Join(msgs[0].To, ",") != "alice@example.org" {
		t.Fatalf("mail: %s", msgs[0].Raw)
	}
	// Bob cannot use alice's code for his account.
	if a := v.post("bob", path, wire.EmailConfirmation{Address: "alice@example.org", Code: code[1]}); a.ok() {
		t.Fatalf("bob confirmed with alice's code: %v", a)
	}
	a := v.post("alice", path, wire.EmailConfirmation{Address: "alice@example.org", Code: code[1]})
	var r wire.EmailConfirmation
	if !a.ok() || json.Unmarshal([]byte(a.body), &r) != nil || !r.Confirmed {
		t.Fatalf("confirming: %v", a)
	}
	// A submission naming an unconfirmed address is refused as such.
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	req := wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up, Options: wire.Options{Notify: []string{"victim@example.org"}},
		Chains: []wire.ChainSpec{{Name: "c", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}
	if a := v.post("alice", server.Base+wire.PathSubmit, req); a.status != http.StatusBadRequest || a.err.Code != wire.CodeBadNotifyTarget ||
		!strings.Contains(a.err.Error, "victim@example.org is not confirmed") {
		t.Fatalf("-notify victim: %v", a)
	}
	req.Options.Notify = []string{"alice@example.org"}
	if a := v.post("alice", server.Base+wire.PathSubmit, req); !a.ok() {
		t.Fatalf("-notify a confirmed address: %v", a)
	}
}
