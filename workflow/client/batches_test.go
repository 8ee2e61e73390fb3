package client

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/naming"
)

func TestIdentFor(t *testing.T) {
	if got := IdentFor("plain_name1"); got != "plain_name1" {
		t.Errorf("a valid name changed: %q", got)
	}
	batch := "condor#submit.example.org#langevin#1733300000"
	seen := map[string]string{}
	for _, n := range []string{batch, batch + "#12.0", batch + "#12.1", "a b", "a_b", "a#b", strings.Repeat("x", 300)} {
		id := IdentFor(n)
		if err := naming.CheckIdent("name", id); err != nil {
			t.Errorf("IdentFor(%q) = %q: %v", n, id, err)
		}
		if len(id) > identForMax && n != "a_b" {
			t.Errorf("IdentFor(%q) = %q is longer than %d", n, id, identForMax)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%q and %q both give %q", n, other, id)
		}
		seen[id] = n
	}
	if !strings.Contains(IdentFor(batch+"#12.1"), "12_1_") {
		t.Errorf("the job's own part is lost: %q", IdentFor(batch+"#12.1"))
	}
}
