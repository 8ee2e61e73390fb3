package main

import (
	"strings"
	"testing"
)

// The second host needs the state in MariaDB: on SQLite the kind is
// skipped with the reason, not run.
func TestHost2SkippedOnSQLite(t *testing.T) {
	why := host2Skip(false)
	if why == "" || !strings.Contains(why, "MariaDB") {
		t.Errorf("host2 on SQLite: skip reason %q, want one naming MariaDB", why)
	}
}
