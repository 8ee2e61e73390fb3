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

// TestDocsPages: every option the README and docs/ give rboinc-submit in
// their examples is one it takes, or a parameter of the shipped queue.
func TestDocsPages(t *testing.T) {
	docstest.CheckPages(t, newApp(nil, nil), "rboinc-submit", true, docstest.QueueParameters(t)...)
}
