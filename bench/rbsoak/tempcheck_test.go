package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTempKeepsMariaDBTemplate: the MariaDB install kept under TMPDIR
// for later servers is no leftover; any other name there is.
func TestCheckTempKeepsMariaDBTemplate(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Mkdir(filepath.Join(tmp, "rboinc-mariadbtest-template-0123456789abcdef"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := &soak{tmp: tmp}
	s.checkTemp()
	if len(s.problems) != 0 {
		t.Fatalf("the kept MariaDB install counted as a leftover: %q", s.problems)
	}
	if err := os.WriteFile(filepath.Join(tmp, "upload-123.part"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s.checkTemp()
	if len(s.problems) != 1 || !strings.Contains(s.problems[0], "upload-123.part") {
		t.Fatalf("a forgotten file not reported: %q", s.problems)
	}
}
