package main

import (
	"testing"

	"github.com/rboinc/rboinc/internal/clitool/docstest"
)

// TestDocs: the manual page and completions of rboinc-retrieve hold every
// flag, and the shells and man accept them.
func TestDocs(t *testing.T) {
	docstest.Check(t, newApp(), true, "-grou", "-group")
}

// TestDocsPages: every option the README and docs/ give rboinc-retrieve
// in their examples is one it takes (-resume also takes a queue's
// parameters).
func TestDocsPages(t *testing.T) {
	docstest.CheckPages(t, newApp(), "rboinc-retrieve", true, docstest.QueueParameters(t)...)
}
