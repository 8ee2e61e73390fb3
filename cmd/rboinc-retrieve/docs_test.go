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
