package server_test

import (
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestAuthDatabaseDownIsRetryable: when the state database cannot be
// read (MariaDB killed and restarting, in the soak), a request is answered
// 500, which the clients retry, not 401 "unknown or revoked token", which
// tells the user to replace a token that is fine (rboinc-submit and
// rboinc-retrieve exit 5 and stop).
func TestAuthDatabaseDownIsRetryable(t *testing.T) {
	v := newEnv(t)
	if _, err := v.db.SQL().Exec("ALTER TABLE users RENAME TO users_gone"); err != nil {
		t.Fatal(err)
	}
	a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathWhoAmI, nil)
	if a.status != 500 || a.err.Code != wire.CodeInternal {
		t.Fatalf("whoami while the users cannot be read: %d %s, want 500 %s", a.status, a.body, wire.CodeInternal)
	}
	if _, err := v.db.SQL().Exec("ALTER TABLE users_gone RENAME TO users"); err != nil {
		t.Fatal(err)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi"+wire.PathWhoAmI, nil); a.status != 200 {
		t.Fatalf("whoami once the database answers again: %d %s", a.status, a.body)
	}
}
