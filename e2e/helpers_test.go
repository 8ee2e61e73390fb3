package e2e

import (
	"regexp"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rboinc/rboinc/internal/standin"
)

func mustRE(ts *testscript.TestScript, s string) *regexp.Regexp {
	re, err := regexp.Compile(s)
	if err != nil {
		ts.Fatalf("bad regexp %q: %v", s, err)
	}
	return re
}

func standinIdle(project string) (bool, error) { return standin.Idle(project) }
