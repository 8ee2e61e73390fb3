package legacy_test

import (
	"strings"
	"testing"
)

// TestInternalErrorHidden: a failure inside the server reaches the
// original clients as a request id, not as the database's error.
func TestInternalErrorHidden(t *testing.T) {
	w := newWorld(t)
	if _, err := w.db.SQL().Exec("ALTER TABLE chains RENAME TO chains_gone"); err != nil {
		t.Fatal(err)
	}
	ans := w.post("toni", "boinc_retrieve_server.pl", "action=status&group=G1")
	if !strings.Contains(ans, "<Failure") || !strings.Contains(ans, "internal server error (request ") {
		t.Fatalf("status with a broken database answered %q, want a Failure with a request id", ans)
	}
	for _, leak := range []string{"chains", "no such table", "SQL"} {
		if strings.Contains(ans, leak) {
			t.Errorf("the answer shows the internal error (%q): %s", leak, ans)
		}
	}
}
