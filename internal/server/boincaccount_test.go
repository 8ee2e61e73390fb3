package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestBoincAuthenticatorLogsIn: a BOINC account's authenticator logs in as
// the rboinc user linked to it, and only then; where the project grants
// job submission (user_submit), only to accounts holding the right;
// -assign_user_all me is the linked account.
func TestBoincAuthenticatorLogsIn(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	bdb, err := v.e.OpenBoincDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	const auth, other = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	for i, a := range []string{auth, other} {
		if _, err := bdb.ExecContext(ctx, "INSERT INTO `user` (id, create_time, email_addr, name, authenticator) VALUES (?, 1, ?, ?, ?)",
			41+i, a+"@x", "vol", a); err != nil {
			t.Fatal(err)
		}
	}
	v.tokens["boinc"], v.tokens["other"] = auth, other
	get := func(who string) answer { return v.call(who, "GET", "/rboinc_cgi"+wire.PathStatus, nil) }
	if a := get("boinc"); a.status != 401 || !strings.Contains(a.body, "linked to no rboinc user") {
		t.Errorf("unlinked account: %s", a)
	}
	if err := v.db.SetBoincUser(ctx, "alice", 41); err != nil {
		t.Fatal(err)
	}
	if err := v.db.SetBoincUser(ctx, "bob", 41); err == nil {
		t.Error("one BOINC account linked to two users")
	}
	a := v.call("boinc", "GET", "/rboinc_cgi"+wire.PathWhoAmI, nil)
	if !a.ok() || !strings.Contains(a.body, `"alice"`) {
		t.Errorf("linked account: %s, want alice", a)
	}
	if a := get("other"); a.status != 401 {
		t.Errorf("another account's authenticator: %s", a)
	}
	if a := v.call("", "GET", "/rboinc_cgi"+wire.PathStatus, nil, "Authorization", "Bearer 0123456789ABCDEF0123456789ABCDEF"); a.status != 401 {
		t.Errorf("upper-case authenticator: %s", a)
	}
	// The project grants job submission to account 7 only: 41 is refused.
	if _, err := bdb.ExecContext(ctx, `INSERT INTO user_submit (user_id) VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	if a := get("boinc"); a.status != 401 || !strings.Contains(a.body, "may not submit") {
		t.Errorf("account without user_submit: %s", a)
	}
	if _, err := bdb.ExecContext(ctx, `INSERT INTO user_submit (user_id, submit_all) VALUES (41, 1)`); err != nil {
		t.Fatal(err)
	}
	if a := get("boinc"); !a.ok() {
		t.Errorf("account with user_submit: %s", a)
	}
	// rboinc's own token keeps working.
	if a := get("alice"); !a.ok() {
		t.Errorf("alice's token: %s", a)
	}

	// -assign_user_all me: the linked account; refused for a user without one.
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	req := langevin("g", "mine", up, 1, refs[0], refs[1])
	req.Options.AssignUserAll = wire.AssignSelf
	if a := v.post("alice", "/rboinc_cgi"+wire.PathSubmit, req); !a.ok() {
		t.Fatalf("submit as me: %s", a)
	}
	if n := v.boincWUs("mine-ALICE_g-%"); n != 1 {
		t.Fatalf("%d work units", n)
	}
	var target int64
	if err := bdb.QueryRowContext(ctx, `SELECT a.target_id FROM assignment a JOIN workunit w ON w.id = a.workunitid WHERE w.name LIKE 'mine-ALICE_g-%' AND a.target_type = 2`).Scan(&target); err != nil || target != 41 {
		t.Errorf("assigned to %d (%v), want BOINC user 41", target, err)
	}
	up, refs = v.upload("bob", "1 2 3\n", "0 0 0\n")
	req = langevin("g", "his", up, 1, refs[0], refs[1])
	req.Options.AssignUserAll = wire.AssignSelf
	if a := v.post("bob", "/rboinc_cgi"+wire.PathSubmit, req); a.status != 400 || !strings.Contains(a.body, "linked to no BOINC account") {
		t.Errorf("bob submits as me: %s", a)
	}
}
