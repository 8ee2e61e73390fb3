package gahp_test

import (
	"strings"
	"testing"
	"time"
)

// TestSubmitSentAgain: HTCondor sends a BOINC_SUBMIT again when its answer
// was lost (the GAHP restarted, the server answered outcome_unknown): the
// same batch is answered as submitted, each job once; another batch under
// its name is still refused.
func TestSubmitSentAgain(t *testing.T) {
	p := newProject(t)
	dir := t.TempDir()
	c := p.session(dir)
	if r := c.request(batchLine(t, dir, 1, "b", 3, 2), time.Minute); r != "1 NULL" {
		t.Fatalf("submission: %q", r)
	}
	if r := c.request(batchLine(t, dir, 2, "b", 3, 2), time.Minute); r != "2 NULL" {
		t.Fatalf("the same submission sent again: %q, want NULL", r)
	}
	r := c.request("BOINC_QUERY_BATCHES 3 0 1 b", time.Minute)
	if f := strings.Fields(r); len(f) != 4+2*3 || f[1] != "NULL" || f[3] != "3" {
		t.Fatalf("query: %q, want the batch's 3 jobs", r)
	}
	if r := c.request(batchLine(t, dir, 4, "b", 2, 2), time.Minute); !strings.Contains(r, "error\\ submitting\\ jobs") {
		t.Fatalf("another batch under the name: %q, want refused", r)
	}
}
