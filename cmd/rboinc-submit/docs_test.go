package main

import (
	"testing"

	"github.com/rboinc/rboinc/internal/clitool/docstest"
)

// TestDocs: the manual page and completions of rboinc-submit (its fixed
// options: a queue's own come from the server) hold every flag, and the
// shells and man accept them.
func TestDocs(t *testing.T) {
	docstest.Check(t, newApp(nil, nil), true, "-app", "-app_name")
}
