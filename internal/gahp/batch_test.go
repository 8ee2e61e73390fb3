package gahp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestThousandJobs: a batch of 1,000 jobs through the GAHP takes one
// create_work run, and each distinct input reaches the server once; a
// second batch of the same inputs uploads nothing.
func TestThousandJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 jobs")
	}
	p := newProject(t)
	dir := t.TempDir()
	c := p.session(dir)
	const n, distinct = 1000, 10
	if r := c.request(batchLine(t, dir, 1, "big", n, distinct), 2*time.Minute); r != "1 NULL" {
		t.Fatalf("submission: %q", r)
	}
	if got := p.runs(); got != 1 {
		t.Errorf("%d create_work runs for one batch, want 1", got)
	}
	if got, puts := p.inline.Load(), p.puts.Load(); got != distinct+1 || puts != 0 {
		t.Errorf("%d contents sent inline and %d by PUT, want %d and 0 (each distinct input once)", got, puts, distinct+1)
	}
	r := c.request("BOINC_QUERY_BATCHES 2 0 1 big", time.Minute)
	if f := strings.Fields(r); len(f) != 4+2*n || f[1] != "NULL" || f[3] != fmt.Sprint(n) {
		t.Fatalf("query: %.200q", r)
	}
	if r := c.request(batchLine(t, dir, 3, "again", n, distinct), 2*time.Minute); r != "3 NULL" {
		t.Fatalf("second submission: %q", r)
	}
	if got := p.inline.Load(); got != distinct+1 || p.runs() != 2 {
		t.Errorf("the second batch sent %d contents, %d create_work runs in all", got-distinct-1, p.runs())
	}
}
