package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// batchReq is a batch of two jobs (j1 running, j2 finished by the test).
func (v *env) batch(user, name string, lease int64) wire.SubmitResponse {
	v.t.Helper()
	up, refs := v.upload(user, "1 2 3\n", "0 0 0\n")
	req := langevin("bg_"+user, "c1", up, 1, refs[0], refs[1])
	req.Chains = append(req.Chains, req.Chains[0])
	req.Chains[0].Job, req.Chains[0].Args = name+"#1.0", []string{"-n", "5"}
	req.Chains[1].Name, req.Chains[1].Job = "c2", name+"#1.1"
	req.Batch = &wire.BatchSpec{Name: name, Lease: lease}
	a := v.post(user, "/rboinc_cgi/api/v1/submit", req)
	var resp wire.SubmitResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &resp) != nil || len(resp.Chains) != 2 {
		v.t.Fatalf("batch %s of %s: %v", name, user, a)
	}
	return resp
}

func (v *env) query(user string, names ...string) (wire.BatchesResponse, answer) {
	v.t.Helper()
	a := v.post(user, "/rboinc_cgi/api/v1/batches/query", wire.BatchQuery{Names: names})
	var r wire.BatchesResponse
	json.Unmarshal([]byte(a.body), &r)
	return r, a
}

// TestBatchAPI: a batch made with its jobs, queried with each job's state,
// a job's outputs, abort, lease and retire; the batch name and job names
// are refused a second time; nothing of it is left after retiring.
func TestBatchAPI(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	resp := v.batch("alice", "condor#s#langevin#1", 0)
	v.finish(resp.Chains[1].FirstWU)
	r, a := v.query("alice", "condor#s#langevin#1")
	if !a.ok() || len(r.Batches) != 1 || r.ServerTime == 0 {
		t.Fatalf("query: %v", a)
	}
	states := map[string]string{}
	for _, j := range r.Batches[0].Jobs {
		states[j.Name] = j.State
	}
	if states["condor#s#langevin#1#1.0"] != wire.JobInProgress || states["condor#s#langevin#1#1.1"] != wire.JobDone {
		t.Errorf("job states: %v", states)
	}
	// A change-since query from the future lists nothing.
	a = v.post("alice", "/rboinc_cgi/api/v1/batches/query", wire.BatchQuery{MinModTime: r.ServerTime + 3600, Names: []string{"condor#s#langevin#1"}})
	var later wire.BatchesResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &later) != nil || len(later.Batches) != 1 || len(later.Batches[0].Jobs) != 0 {
		t.Errorf("query from the future: %v", a)
	}
	out := v.call("alice", "GET", "/rboinc_cgi/api/v1/batches/output?job=condor%23s%23langevin%231%231.1", nil)
	var jo wire.JobOutput
	if !out.ok() || json.Unmarshal([]byte(out.body), &jo) != nil || jo.State != wire.JobDone || len(jo.Files) != 3 || jo.Files[0].OpenName != "output.coor" {
		t.Errorf("output: %v", out)
	}
	// Names taken.
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	again := langevin("other", "c9", up, 1, refs[0], refs[1])
	again.Chains[0].Job = "condor#s#langevin#1#1.0"
	again.Batch = &wire.BatchSpec{Name: "fresh"}
	if a := v.post("alice", "/rboinc_cgi/api/v1/submit", again); a.status != 409 {
		t.Errorf("a job name in use: %v", a)
	}
	up, _ = v.upload("alice", "1 2 3\n", "0 0 0\n")
	again.Upload, again.Chains[0].Job, again.Batch.Name = up, "new", "condor#s#langevin#1"
	if a := v.post("alice", "/rboinc_cgi/api/v1/submit", again); a.status != 409 {
		t.Errorf("a batch name in use: %v", a)
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/abort", wire.JobsRef{Jobs: []string{"condor#s#langevin#1#1.0"}}); !a.ok() || !strings.Contains(a.body, `"count":1`) {
		t.Errorf("abort: %v", a)
	}
	r, _ = v.query("alice", "condor#s#langevin#1")
	for _, j := range r.Batches[0].Jobs {
		if j.Name == "condor#s#langevin#1#1.0" && j.State != wire.JobError {
			t.Errorf("an aborted job is %s", j.State)
		}
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/lease", wire.BatchRef{Name: "condor#s#langevin#1", Lease: 4102444800}); !a.ok() {
		t.Errorf("lease: %v", a)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi/api/v1/batches", nil); !a.ok() || !strings.Contains(a.body, `"lease":4102444800`) {
		t.Errorf("list: %v", a)
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "condor#s#langevin#1"}); !a.ok() {
		t.Errorf("retire: %v", a)
	}
	// Retired, it is still shown (state retired, no jobs), as BOINC's
	// query shows a retired batch; one never made is not found.
	if r, a := v.query("alice", "condor#s#langevin#1"); !a.ok() || len(r.Batches) != 1 || r.Batches[0].State != wire.BatchRetired ||
		r.Batches[0].Retired == 0 || len(r.Batches[0].Jobs) != 0 {
		t.Errorf("query after retire: %v %+v", a, r)
	}
	if _, a := v.query("alice", "condor#s#langevin#2"); a.status != 404 || !strings.HasSuffix(a.err.Error, "no batch named condor#s#langevin#2") {
		t.Errorf("query of a batch never made: %v", a)
	}
	// Another user's query does not see it.
	if _, a := v.query("bob", "condor#s#langevin#1"); a.status != 404 {
		t.Errorf("bob's query of alice's retired batch: %v", a)
	}
	var n int
	for _, q := range []string{`SELECT count(*) FROM batches`, `SELECT count(*) FROM batch_jobs`, `SELECT count(*) FROM chains WHERE state != 'purged'`, `SELECT count(*) FROM results`} {
		v.db.SQL().QueryRow(q).Scan(&n)
		if n != 0 {
			t.Errorf("%s: %d left after retiring", q, n)
		}
	}
}

// TestRetireAgain: a retirement sent again (its answer lost: the server or
// the GAHP killed mid-request, and HTCondor's gridmanager retries) is
// answered as done, as is one of a batch whose lease ended, and a lease
// set on either or an abort of their jobs is taken with no effect; a
// batch or job never made is still not found, nor is another user's
// retired one; a batch made again under a retired name is retired again.
func TestRetireAgain(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.batch("alice", "b", 0)
	for i := range 2 {
		a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "b"})
		if !a.ok() {
			t.Fatalf("retirement %d: %v", i+1, a)
		}
		if i == 1 && !strings.Contains(a.body, "retired already") {
			t.Errorf("the second retirement: %v", a)
		}
	}
	// A lease set on it is taken with no effect, as BOINC's
	// set_expire_time takes one for a retired batch.
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/lease", wire.BatchRef{Name: "b", Lease: 4102444800}); !a.ok() || !strings.Contains(a.body, `"count":0`) || !strings.Contains(a.body, "batch b was retired") {
		t.Errorf("a lease on the retired batch: %v", a)
	}
	for _, c := range []struct{ user, name string }{{"alice", "never"}, {"bob", "b"}} {
		if a := v.post(c.user, "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: c.name}); a.status != 404 {
			t.Errorf("%s retiring %s: %v", c.user, c.name, a)
		}
		if a := v.post(c.user, "/rboinc_cgi/api/v1/batches/lease", wire.BatchRef{Name: c.name, Lease: 4102444800}); a.status != 404 || !strings.HasSuffix(a.err.Error, "no batch named "+c.name) {
			t.Errorf("%s setting the lease of %s: %v", c.user, c.name, a)
		}
		if a := v.post(c.user, "/rboinc_cgi/api/v1/batches/abort", wire.JobsRef{Jobs: []string{c.name + "#1.0"}}); a.status != 404 || !strings.HasSuffix(a.err.Error, "no job named "+c.name+"#1.0") {
			t.Errorf("%s aborting job %s#1.0: %v", c.user, c.name, a)
		}
	}
	// Its jobs are aborted with no effect, as BOINC's abort_jobs takes a
	// retired batch's jobs; one of them beside a live job of another
	// batch: that one is aborted.
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/abort", wire.JobsRef{Jobs: []string{"b#1.0", "b#1.1"}}); !a.ok() || !strings.Contains(a.body, `"count":0`) || !strings.Contains(a.body, "2 jobs of retired batches, nothing to abort") {
		t.Errorf("aborting the retired batch's jobs: %v", a)
	}
	v.batch("alice", "live", 0)
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/abort", wire.JobsRef{Jobs: []string{"live#1.0", "b#1.1"}}); !a.ok() || !strings.Contains(a.body, `"count":1`) || !strings.Contains(a.body, "1 job of retired batches") {
		t.Errorf("aborting a live job and a retired one: %v", a)
	}
	if r, a := v.query("alice", "live"); !a.ok() || len(r.Batches) != 1 || len(r.Batches[0].Jobs) != 2 || r.Batches[0].Jobs[0].State != wire.JobError || r.Batches[0].Jobs[1].State == wire.JobError {
		t.Errorf("the live batch after aborting one of its jobs: %v %+v", a, r)
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "live"}); !a.ok() {
		t.Fatalf("retiring the live batch: %v", a)
	}
	// The name made again is a live batch: queried, then retired for real.
	v.batch("alice", "b", 0)
	if r, a := v.query("alice", "b"); !a.ok() || len(r.Batches) != 1 || len(r.Batches[0].Jobs) != 2 {
		t.Fatalf("the batch made again: %v", a)
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "b"}); !a.ok() || strings.Contains(a.body, "retired already") || !strings.Contains(a.body, `"count":2`) {
		t.Errorf("retiring the batch made again: %v", a)
	}
	// A lease's end retires too.
	v.batch("alice", "leased", 1)
	if n, err := v.e.ExpireLeases(context.Background()); err != nil || n != 1 {
		t.Fatalf("expired %d batches: %v", n, err)
	}
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "leased"}); !a.ok() {
		t.Errorf("retiring a batch whose lease ended: %v", a)
	}
	// The gridmanager, back after the lease ended, renews it: no error,
	// and nothing made again.
	if a := v.post("alice", "/rboinc_cgi/api/v1/batches/lease", wire.BatchRef{Name: "leased", Lease: 4102444800}); !a.ok() || !strings.Contains(a.body, `"count":0`) {
		t.Errorf("renewing the lease of a batch whose lease ended: %v", a)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi/api/v1/batches", nil); !a.ok() || strings.Contains(a.body, `"leased"`) {
		t.Errorf("the retired batch listed again after a lease: %v", a)
	}
}

// TestBatchIsolation: another user's batches and jobs are answered as
// ones that do not exist, and nothing of them changes.
func TestBatchIsolation(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	resp := v.batch("alice", "b", 0)
	v.finish(resp.Chains[1].FirstWU)
	before := v.state("alice")
	for _, a := range []answer{
		v.post("bob", "/rboinc_cgi/api/v1/batches/query", wire.BatchQuery{Names: []string{"b"}}),
		v.call("bob", "GET", "/rboinc_cgi/api/v1/batches/output?job=b%231.1", nil),
		v.post("bob", "/rboinc_cgi/api/v1/batches/abort", wire.JobsRef{Jobs: []string{"b#1.0"}}),
		v.post("bob", "/rboinc_cgi/api/v1/batches/retire", wire.BatchRef{Name: "b"}),
		v.post("bob", "/rboinc_cgi/api/v1/batches/lease", wire.BatchRef{Name: "b", Lease: 1}),
	} {
		if a.status != 404 {
			t.Errorf("bob on alice's batch: %v", a)
		}
	}
	if a := v.call("bob", "GET", "/rboinc_cgi/api/v1/batches", nil); !a.ok() || strings.Contains(a.body, `"b"`) {
		t.Errorf("bob's list: %v", a)
	}
	if a := v.call("", "GET", "/rboinc_cgi/api/v1/batches", nil); a.status != 401 {
		t.Errorf("no credentials: %v", a)
	}
	v.e.ExpireLeases(context.Background())
	v.unchanged(t, "bob's batch requests", "alice", before)
	// The same names are bob's own to use.
	v.batch("bob", "b", 0)
}

// TestLeaseExpiry: a batch whose lease has ended is aborted and retired by
// ExpireLeases (the creator's loop and every batch request run it); one
// whose lease is ahead stays.
func TestLeaseExpiry(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.batch("alice", "old", 1)
	v.batch("bob", "ahead", 4102444800)
	n, err := v.e.ExpireLeases(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("expired %d batches: %v", n, err)
	}
	// Retired, as a retirement leaves it: shown so, without jobs.
	if r, a := v.query("alice", "old"); !a.ok() || len(r.Batches) != 1 || r.Batches[0].State != wire.BatchRetired || r.Batches[0].Retired == 0 || len(r.Batches[0].Jobs) != 0 {
		t.Errorf("the expired batch: %v", a)
	}
	if r, a := v.query("bob", "ahead"); !a.ok() || len(r.Batches[0].Jobs) != 2 {
		t.Errorf("the batch whose lease is ahead: %v", a)
	}
}
