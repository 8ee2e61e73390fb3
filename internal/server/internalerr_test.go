package server_test

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestInternalErrorHidden: a failure inside the server (here its database
// lost a table) is answered 500 with a request id and a generic message;
// the SQL error goes only to the log, under the same id.
func TestInternalErrorHidden(t *testing.T) {
	v := newEnv(t)
	if _, err := v.db.SQL().Exec("ALTER TABLE chains RENAME TO chains_gone"); err != nil {
		t.Fatal(err)
	}
	a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathStatus+"?group=g1", nil)
	if a.status != 500 || a.err.Code != wire.CodeInternal {
		t.Fatalf("status with a broken database: %d %s, want 500 %s", a.status, a.body, wire.CodeInternal)
	}
	for _, leak := range []string{"chains", "no such table", "SQL", "sqlite", "state.db"} {
		if strings.Contains(a.body, leak) {
			t.Errorf("the 500 answer shows the internal error (%q): %s", leak, a.body)
		}
	}
	id := a.hdr.Get(reqid.Header)
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(id) || !strings.Contains(a.err.Error, "request "+id) {
		t.Fatalf("the answer carries no request id (header %q): %s", id, a.body)
	}
	logs := v.logs.String()
	line := ""
	for l := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(l, "request_id="+id) {
			line = l
		}
	}
	if !strings.Contains(line, "no such table") {
		t.Fatalf("the log has no line with request_id=%s and the real error:\n%s", id, logs)
	}
}

// TestBoincAccountCheckFailureHidden: BOINC's database failing while a
// BOINC authenticator is checked is answered with a request id, not with
// the database's error.
func TestBoincAccountCheckFailureHidden(t *testing.T) {
	v := newEnv(t)
	v.e.Log = slog.New(slog.NewTextHandler(v.logs, nil))
	ctx := context.Background()
	bdb, err := v.e.OpenBoincDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	const auth = "0123456789abcdef0123456789abcdef"
	if _, err := bdb.ExecContext(ctx, "INSERT INTO `user` (id, create_time, email_addr, name, authenticator) VALUES (41, 1, 'v@x', 'vol', ?)", auth); err != nil {
		t.Fatal(err)
	}
	if err := v.db.SetBoincUser(ctx, "alice", 41); err != nil {
		t.Fatal(err)
	}
	if _, err := bdb.ExecContext(ctx, "ALTER TABLE user_submit RENAME TO user_submit_gone"); err != nil {
		t.Fatal(err)
	}
	v.tokens["boinc"] = auth
	a := v.call("boinc", "GET", "/rboinc_cgi"+wire.PathWhoAmI, nil)
	// 500, which clients retry: the account may be fine; a 401 would
	// tell its user the credential is wrong.
	if a.status != 500 || !strings.Contains(a.body, "(request ") || strings.Contains(a.body, "user_submit") || strings.Contains(a.body, "no such table") {
		t.Fatalf("a BOINC authenticator checked against a broken database: %s; want a refusal with a request id and no SQL", a)
	}
	if !strings.Contains(v.logs.String(), "user_submit") {
		t.Errorf("the cause is not logged:\n%s", v.logs)
	}
}
