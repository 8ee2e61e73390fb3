package mail

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/smtptest"
)

func local(s *smtptest.Server) Settings {
	return Settings{Host: s.Host, Port: s.Port, From: "rboinc@example.org", TLS: "none", TimeoutSeconds: 10}
}

func TestSendTextAndHTML(t *testing.T) {
	srv := smtptest.Start(t)
	err := Send(context.Background(), local(srv), Message{
		To: []string{"alice@example.org", "bob@example.org"}, Subject: "Nightly report: 3 chains done ✓",
		Text: "3 done\n.\nstill here", HTML: "<p>3 done</p>",
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Wait(1, 5*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(msgs))
	}
	m := msgs[0]
	if m.From != "rboinc@example.org" || strings.Join(m.To, ",") != "alice@example.org,bob@example.org" {
		t.Errorf("envelope from %q to %q", m.From, m.To)
	}
	if m.Subject != "Nightly report: 3 chains done ✓" {
		t.Errorf("subject %q", m.Subject)
	}
	// A line holding only "." must survive SMTP's dot-stuffing.
	if !strings.Contains(m.Raw, "3 done") || !strings.Contains(m.Raw, "still here") || !strings.Contains(m.Raw, "<p>3 done</p>") {
		t.Errorf("body lost parts:\n%s", m.Raw)
	}
	if !strings.Contains(m.Header.Get("Content-Type"), "multipart/alternative") {
		t.Errorf("text and HTML should be alternatives, Content-Type %q", m.Header.Get("Content-Type"))
	}
}

func TestSendAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithAuth("rb", "s3cret"))
	s := local(srv)
	s.Username, s.Password = "rb", "wrong"
	if err := Send(context.Background(), s, Message{To: []string{"a@example.org"}, Subject: "x", Text: "y"}); err == nil {
		t.Fatal("a wrong password was accepted")
	}
	s.Password = "s3cret"
	if err := Send(context.Background(), s, Message{To: []string{"a@example.org"}, Subject: "x", Text: "y"}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Wait(1, 5*time.Second)); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}

func TestSendErrors(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Rejecting("nobody@example.org"))
	ctx := context.Background()
	cases := []struct {
		s    Settings
		m    Message
		want string
	}{
		{Settings{}, Message{To: []string{"a@b.c"}}, `has no "smtp" section`},
		{Settings{From: "a@b.c"}, Message{To: []string{"a@b.c"}}, `no "host"`},
		{Settings{Host: "h"}, Message{To: []string{"a@b.c"}}, `no "from"`},
		{Settings{Host: "h", From: "a@b.c", TLS: "ssl"}, Message{To: []string{"a@b.c"}}, `"tls" is "ssl"`},
		{local(srv), Message{}, "at least one recipient"},
		{local(srv), Message{To: []string{"a@b.c"}, Subject: "a\r\nBcc: x@y.z"}, "line breaks"},
		{local(srv), Message{To: []string{"nobody@example.org"}, Subject: "s", Text: "t"}, "nobody@example.org"},
		{Settings{Host: "127.0.0.1", Port: 1, From: "a@b.c", TLS: "none", TimeoutSeconds: 2}, Message{To: []string{"a@b.c"}, Text: "t"}, "127.0.0.1"},
	}
	for _, c := range cases {
		err := Send(ctx, c.s, c.m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Send(%+v, %+v) = %v, want an error with %q", c.s, c.m, err, c.want)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages accepted from failed sends", n)
	}
}
