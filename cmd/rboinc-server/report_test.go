package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/smtptest"
	"github.com/rboinc/rboinc/internal/store"
)

// TestReportMail: --mail sends the report, text with its HTML
// alternative, through rboinc.json's smtp, to --to or to the user's
// e-mail notification addresses.
func TestReportMail(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if _, err := setup.Init(ctx, setup.Options{Root: root, URLBase: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	smtp := smtptest.Start(t)
	cfgPath := filepath.Join(root, "rboinc.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	json.Unmarshal(b, &cfg)
	cfg["smtp"] = map[string]any{"host": smtp.Host, "port": smtp.Port, "from": "rboinc@example.org", "tls": "none"}
	b, _ = json.Marshal(cfg)
	os.WriteFile(cfgPath, b, 0o644)
	db, err := store.Open(ctx, filepath.Join(root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.AddUser(ctx, "alice", "h1")
	u, _ := db.UserByName(ctx, "alice")
	if _, err := db.CreateChains(ctx, u, []store.NewChain{{Chain: store.Chain{Group: "g", Name: "c", Queue: "q", App: "a", NSteps: 3, Params: "{}", Layout: "{}"}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RegisterEmail(ctx, u.ID, "alice@example.org", store.EmailByAdmin); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, store.NotifyTarget{UserID: u.ID, Kind: store.NotifyEmail, Address: "alice@example.org"}); err != nil {
		t.Fatal(err)
	}
	// A target that got in unconfirmed (before confirmation existed) gets no report.
	if _, err := db.SQL().ExecContext(ctx, `INSERT INTO notify_targets(user_id, grp, kind, address, event_types, created) VALUES (?, 'g', 'email', 'victim@example.org', 'all', 0)`, u.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()

	run := func(args ...string) int {
		return runContext(ctx, app(slog.Default()), append([]string{"rboinc-server", "report", "--root", root}, args...))
	}
	if code := run("--user", "alice", "--mail"); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if code := run("--mail"); code == 0 {
		t.Fatal("the report of every user mailed without --to")
	}
	if code := run("--mail", "--to", "admin@example.org"); code != 0 {
		t.Fatalf("exit %d", code)
	}
	msgs := smtp.Wait(2, 10*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	if m := msgs[0]; strings.Join(m.To, ",") != "alice@example.org" || !strings.HasPrefix(m.Subject, "rboinc report for alice, ") ||
		!strings.Contains(m.Raw, "running    1") || !strings.Contains(m.Raw, "text/html") {
		t.Fatalf("alice's report: %+v", m)
	}
	if m := msgs[1]; strings.Join(m.To, ",") != "admin@example.org" || !strings.HasPrefix(m.Subject, "rboinc report for all users, ") {
		t.Fatalf("the administrator's report: %+v", m)
	}
}

// TestReportMailNoServer: --mail on a server without "smtp" in rboinc.json
// says so in the wording -confirm-email and the notifier use
// (mail.ErrNoServer), not as a missing "host" of a section that is not
// there.
func TestReportMailNoServer(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if _, err := setup.Init(ctx, setup.Options{Root: root, URLBase: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	err := app(slog.Default()).RunContext(ctx, []string{"rboinc-server", "report", "--root", root, "--mail", "--to", "admin@example.org"})
	if !errors.Is(err, mail.ErrNoServer) || err.Error() != "--mail: "+mail.ErrNoServer.Error() {
		t.Fatalf("report --mail without smtp: %v", err)
	}
}
