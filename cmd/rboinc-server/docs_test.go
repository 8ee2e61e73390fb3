package main

import (
	"log/slog"
	"testing"

	"github.com/rboinc/rboinc/internal/clitool/docstest"
)

// TestDocs: the manual pages and completions install-docs writes for
// rboinc-server and rboinc-hook hold every flag and subcommand, and the
// shells and man accept them.
func TestDocs(t *testing.T) {
	a := app(slog.Default())
	prepare(a)
	docstest.Check(t, a, false, "ser", "serve")
	docstest.Check(t, hookDocApp(), false, "--ro", "--root")
}

// TestDocsPages: every option and subcommand the README and docs/ give
// rboinc-server in their examples is one it takes, written in full.
func TestDocsPages(t *testing.T) {
	a := app(slog.Default())
	prepare(a)
	docstest.CheckPages(t, a, "rboinc-server", false)
}
