package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestRetirePurgedBatch: a batch whose group its user purged while its
// jobs ran (rboinc-retrieve -purge; or a retirement cut by a kill between
// the purge of its chains and the drop of its records) stays the GAHP's:
// its jobs show as failed, as BOINC's query shows a batch whose work
// units db_purge removed, until the batch is retired (by its GAHP, or at
// its lease's end); a collection does not drop it. Retired, nothing of it
// is left but its retired names. (The 1,000,000-work-unit soak's driver,
// resumed after a kill, purged such batches' groups and never retired
// them: 4 batches and their 48 jobs were left.)
func TestRetirePurgedBatch(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := context.Background()
	v.batch("alice", "p", 0)
	if a := v.post("alice", "/rboinc_cgi/api/v1/purge", wire.ChainRef{Group: "bg_alice"}); !a.ok() || !strings.Contains(a.body, `"count":2`) {
		t.Fatalf("purging the batch's group while its jobs run: %v", a)
	}
	if _, err := v.e.Collect(ctx, 0); err != nil {
		t.Fatal(err)
	}
	r, a := v.query("alice", "p")
	if !a.ok() || len(r.Batches) != 1 || len(r.Batches[0].Jobs) != 2 {
		t.Fatalf("the batch after its group's purge: %v %+v", a, r)
	}
	for _, j := range r.Batches[0].Jobs {
		if j.State != wire.JobError {
			t.Errorf("job %s of the purged group is %s, want %s", j.Name, j.State, wire.JobError)
		}
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "p"}); !a.ok() || strings.Contains(a.body, "retired already") {
		t.Fatalf("retiring the batch whose group was purged: %v", a)
	}
	if _, err := v.e.Collect(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM batches`:                        0,
		`SELECT count(*) FROM batch_jobs`:                     0,
		`SELECT count(*) FROM chains WHERE state != 'purged'`: 0,
		`SELECT count(*) FROM results`:                        0,
		`SELECT count(*) FROM retired_batches`:                1,
		`SELECT count(*) FROM retired_jobs WHERE batch = 'p'`: 2,
	} {
		var n int
		if err := v.db.SQL().QueryRow(q).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d after the retirement, want %d (%v)", q, n, want, err)
		}
	}
	// The gridmanager's retirement sent again is answered as done.
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "p"}); !a.ok() || !strings.Contains(a.body, "retired already") {
		t.Errorf("the retirement sent again: %v", a)
	}
	// A purged batch whose lease ends is retired as well.
	v.batch("alice", "leased", 1)
	if a := v.post("alice", "/rboinc_cgi/api/v1/purge", wire.ChainRef{Group: "bg_alice"}); !a.ok() {
		t.Fatalf("purging the leased batch's group: %v", a)
	}
	if n, err := v.e.ExpireLeases(ctx); err != nil || n != 1 {
		t.Fatalf("expired %d batches: %v", n, err)
	}
	for _, q := range []string{`SELECT count(*) FROM batches`, `SELECT count(*) FROM batch_jobs`} {
		var n int
		if err := v.db.SQL().QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d after the purged batch's lease ended, want 0 (%v)", q, n, err)
		}
	}
}
