package gahp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
)

// BenchmarkQueryBatches: BOINC_QUERY_BATCHES of a batch of 10,000 jobs,
// through the GAHP (request, "R", RESULTS) against a real server (target:
// < 0.5 s). Baseline, in the same run on the same server: the status of
// the batch's group by the API (what rboinc-retrieve -status asks), which
// lists the same 10,000 chains. Reported: ms per query, ms per status, and
// their ratio.
func BenchmarkQueryBatches(b *testing.B) {
	n := 10000
	if testing.Short() {
		n = 1000 // the smoke run
	}
	p := newProject(b)
	dir := b.TempDir()
	c := p.session(dir)
	if r := c.request(batchLine(b, dir, 1, "q", n, 100), 10*time.Minute); r != "1 NULL" {
		b.Fatalf("submission: %q", r)
	}
	if a := c.ask("ASYNC_MODE_ON"); a != "S" {
		b.Fatal(a)
	}
	cl, err := client.New(p.url, p.token)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var query, status time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		if a := c.ask("BOINC_QUERY_BATCHES 2 0 1 q"); a != "S" {
			b.Fatal(a)
		}
		if r := c.line(); r != "R" {
			b.Fatalf("want R, got %q", r)
		}
		if a := c.ask("RESULTS"); a != "S 1" {
			b.Fatal(a)
		}
		r := c.line()
		query += time.Since(t0)
		if f := strings.Fields(r); len(f) != 4+2*n {
			b.Fatalf("query listed %d words", len(f))
		}
		t1 := time.Now()
		st, err := cl.Status(ctx, client.IdentFor("q"), "")
		status += time.Since(t1)
		if err != nil || len(st.Chains) != n {
			b.Fatalf("status: %v", err)
		}
	}
	k := float64(b.N)
	b.ReportMetric(float64(query.Milliseconds())/k, "query-ms")
	b.ReportMetric(float64(status.Milliseconds())/k, "status-ms")
	b.ReportMetric(float64(query)/float64(status), "query/status")
}
