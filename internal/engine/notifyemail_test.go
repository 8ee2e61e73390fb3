package engine_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/smtptest"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

var codeInMail = regexp.MustCompile(`-code ([0-9]{8})\b`)

// mailedCode is the code in the newest message to addr.
func mailedCode(t *testing.T, smtp *smtptest.Server, n int, addr string) string {
	t.Helper()
	msgs := smtp.Wait(n, 10*time.Second)
	m := msgs[n-1]
	if strings.Join(m.To, ",") != addr {
		t.Fatalf("message %d went to %v, want %s", n, m.To, addr)
	}
	c := codeInMail.FindStringSubmatch(m.Body)
	if c == nil {
		t.Fatalf("no code in the mail:\n%s", m.Raw)
	}
	return c[1]
}

// TestEmailConfirmedByCode: an address is confirmed by the code mailed
// to it (stored hashed, a few wrong guesses allowed, expiring), at a
// bounded rate; only then may a submission name it, and only then is mail
// sent there.
func TestEmailConfirmedByCode(t *testing.T) {
	f := newFixture(t)
	ask := func(addr, code string) (wire.EmailConfirmation, error) {
		return f.e.ConfirmEmail(f.ctx, f.u, wire.EmailConfirmation{Address: addr, Code: code})
	}
	// Without SMTP the scientist is told as the administrator is
	// (mail.ErrNoServer's wording), and whom to ask.
	if _, err := ask("alice@example.org", ""); engine.KindOf(err) != engine.KindBadRequest || !errors.Is(err, mail.ErrNoServer) ||
		!strings.HasPrefix(err.Error(), mail.ErrNoServer.Error()+": ask the administrator") {
		t.Fatalf("without SMTP: %v", err)
	}
	smtp := smtptest.Start(t)
	f.e.Cfg.SMTP = mail.Settings{Host: smtp.Host, Port: smtp.Port, From: "rboinc@example.org", TLS: "none"}
	for _, bad := range []string{"https://example.org/", "Alice <a@example.org>", "a@b.c\r\nBcc: x@y.z", ""} {
		if _, err := ask(bad, ""); engine.KindOf(err) != engine.KindBadTarget {
			t.Errorf("asking a code for %q: %v", bad, err)
		}
	}

	r, err := ask("alice@example.org", "")
	if err != nil || r.Confirmed || !strings.Contains(r.Message, "-confirm-email alice@example.org -code CODE") {
		t.Fatalf("asking a code: %+v, %v", r, err)
	}
	code := mailedCode(t, smtp, 1, "alice@example.org")
	var stored string
	f.e.State().SQL().QueryRow(`SELECT code_hash FROM notify_email_codes WHERE address = ?`, "alice@example.org").Scan(&stored)
	if stored == "" || strings.Contains(stored, code) {
		t.Fatalf("the code is stored as %q", stored)
	}
	// Not confirmed yet: a submission may not name it.
	f.submitNotify(t, "m", []string{"alice@example.org"}, engine.KindBadTarget)
	wrong := "00000000"
	if wrong == code {
		wrong = "00000001"
	}
	if _, err := ask("alice@example.org", wrong); engine.KindOf(err) != engine.KindBadRequest || !strings.Contains(err.Error(), "wrong code") {
		t.Fatalf("a wrong code: %v", err)
	}
	if _, err := f.e.ConfirmEmail(f.ctx, store.User{ID: 999, Name: "mallory"}, wire.EmailConfirmation{Address: "alice@example.org", Code: code}); err == nil {
		t.Fatal("another user confirmed with alice's code")
	}
	if r, err := ask("alice@example.org", " "+code+" "); err != nil || !r.Confirmed {
		t.Fatalf("the right code: %+v, %v", r, err)
	}
	if _, err := ask("alice@example.org", code); err != nil {
		t.Fatalf("asking again for a confirmed address: %v", err)
	}
	f.submitNotify(t, "m", []string{"alice@example.org"}, engine.KindInternal)

	// Guessing: after 5 wrong codes the right one is refused too.
	if _, err := ask("lab@example.org", ""); err != nil {
		t.Fatal(err)
	}
	code2 := mailedCode(t, smtp, 2, "lab@example.org")
	for range 5 {
		if _, err := ask("lab@example.org", wrong); err == nil {
			t.Fatal("a wrong code accepted")
		}
	}
	if _, err := ask("lab@example.org", code2); err == nil || !strings.Contains(err.Error(), "too many wrong codes") {
		t.Fatalf("the right code after 5 wrong ones: %v", err)
	}
	// Expired: refused.
	if _, err := ask("old@example.org", ""); err != nil {
		t.Fatal(err)
	}
	code3 := mailedCode(t, smtp, 3, "old@example.org")
	f.e.State().SQL().Exec(`UPDATE notify_email_codes SET expires = ? WHERE address = ?`, time.Now().Add(-time.Minute).Unix(), "old@example.org")
	if _, err := ask("old@example.org", code3); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired code: %v", err)
	}
	// Rate: a fourth code within the hour is refused, and not mailed.
	if _, err := ask("victim@example.org", ""); engine.KindOf(err) != engine.KindQuota || !strings.Contains(err.Error(), "an hour") {
		t.Fatalf("a fourth code in an hour: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(smtp.Messages()); n != 3 {
		t.Fatalf("%d messages mailed, want 3", n)
	}
}

// TestEmailCodesPerAddressBounded: whoever asks, one address gets few
// codes a day.
func TestEmailCodesPerAddressBounded(t *testing.T) {
	f := newFixture(t)
	rate := store.CodeRate{PerUserHour: 100, PerAddressDay: 2}
	exp := time.Now().Add(time.Hour).Unix()
	for i := range 2 {
		if err := f.e.State().NewEmailCode(f.ctx, f.u.ID+int64(i), "victim@example.org", "x:y", exp, rate); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.e.State().NewEmailCode(f.ctx, f.u.ID+5, "victim@example.org", "x:y", exp, rate); err == nil || !strings.Contains(err.Error(), "a day for one address") {
		t.Fatalf("a third code for one address: %v", err)
	}
}

// TestEmailToUnconfirmedAddressNeverSent: an e-mail target that got into
// the database unconfirmed (before confirmation existed) is never mailed;
// its deliveries are dropped.
func TestEmailToUnconfirmedAddressNeverSent(t *testing.T) {
	f := newFixture(t)
	smtp := smtptest.Start(t)
	f.e.Cfg.SMTP = mail.Settings{Host: smtp.Host, Port: smtp.Port, From: "rboinc@example.org", TLS: "none"}
	if _, err := f.e.State().SQL().Exec(`INSERT INTO notify_targets(user_id, grp, kind, address, event_types, created) VALUES (?, 'g', 'email', 'victim@example.org', 'all', 0)`, f.u.ID); err != nil {
		t.Fatal(err)
	}
	addEvent(t, f.e, f.u.ID, store.EvChainDone, "g", "c")
	drain(t, f.e, 5)
	time.Sleep(200 * time.Millisecond)
	if msgs := smtp.Messages(); len(msgs) != 0 {
		t.Fatalf("mailed an unconfirmed address: %v", msgs[0].To)
	}
	if err := f.e.AddNotifyTargets(f.ctx, []store.NotifyTarget{{UserID: f.u.ID, Kind: store.NotifyEmail, Address: "victim2@example.org", Events: []string{"all"}}}); engine.KindOf(err) != engine.KindBadTarget {
		t.Fatalf("registering an unconfirmed address: %v", err)
	}
}
