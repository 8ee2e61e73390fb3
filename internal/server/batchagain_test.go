package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// batchRequest is a batch of two jobs in group grp, uploading its inputs;
// arg is the first job's argument (another one makes another request).
func (v *env) batchRequest(user, name, grp, arg string) wire.SubmitRequest {
	v.t.Helper()
	up, refs := v.upload(user, "1 2 3\n", "0 0 0\n")
	req := langevin(grp, "c1", up, 2, refs[0], refs[1])
	req.Chains = append(req.Chains, req.Chains[0])
	req.Chains[0].Job, req.Chains[0].Args = name+"#1.0", []string{"-n", arg}
	req.Chains[1].Name, req.Chains[1].Job = "c2", name+"#1.1"
	req.Batch = &wire.BatchSpec{Name: name}
	return req
}

// wholeBatch checks that batch name holds its two jobs, each once, each
// with its chain, and that the group holds these two chains alone.
func (v *env) wholeBatch(t *testing.T, user, name, grp string) {
	t.Helper()
	r, a := v.query(user, name)
	if !a.ok() || len(r.Batches) != 1 || len(r.Batches[0].Jobs) != 2 {
		t.Fatalf("batch %s: %v", name, a)
	}
	for _, j := range r.Batches[0].Jobs {
		if j.State != wire.JobInProgress {
			t.Errorf("batch %s, job %s: %s, want in progress", name, j.Name, j.State)
		}
	}
	var n int
	if err := v.db.SQL().QueryRow(`SELECT count(*) FROM chains WHERE grp = ? AND state != 'purged'`, grp).Scan(&n); err != nil || n != 2 {
		t.Errorf("group %s holds %d chains (%v), want 2", grp, n, err)
	}
	if err := v.db.SQL().QueryRow(`SELECT count(*) FROM steps s JOIN chains c ON c.id = s.chain_id WHERE c.grp = ?`, grp).Scan(&n); err != nil || n != 2 {
		t.Errorf("group %s has %d steps (%v), want 2 (each chain's first, once)", grp, n, err)
	}
}

// TestBatchSentAgainAfterBrokenCommit: a batch submission whose outcome
// the client could not know (the state database gone during a commit:
// 503 outcome_unknown; the connection lost) is sent again as it was, and
// the batch ends holding all its jobs exactly once, whatever part of it
// had been recorded. A different request under the same name is refused
// still. Before, the second try was refused "already exists" while the
// batch held none of its jobs, or was gone while its chains stayed, and
// HTCondor's jobs were held until the batch was retired.
func TestBatchSentAgainAfterBrokenCommit(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := context.Background()
	submit := func(req wire.SubmitRequest) (wire.SubmitResponse, answer) {
		a := v.post("alice", "/rboinc_cgi/api/v1/submit", req)
		var resp wire.SubmitResponse
		json.Unmarshal([]byte(a.body), &resp)
		return resp, a
	}

	// The batch's record committed, its chains' not.
	alice, err := v.db.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.db.CreateBatch(ctx, store.Batch{UserID: alice.ID, Name: "a", Group: "ga", Queue: "langevin"},
		[]store.BatchJob{{Name: "a#1.0", Chain: "c1"}, {Name: "a#1.1", Chain: "c2"}}); err != nil {
		t.Fatal(err)
	}
	if resp, a := submit(v.batchRequest("alice", "a", "ga", "5")); !a.ok() || len(resp.Chains) != 2 || resp.AlreadySubmitted {
		t.Fatalf("batch a sent again after only its record committed: %v", a)
	}
	v.wholeBatch(t, "alice", "a", "ga")

	// Everything committed, the answer lost.
	if _, a := submit(v.batchRequest("alice", "b", "gb", "5")); !a.ok() {
		t.Fatalf("batch b: %v", a)
	}
	if resp, a := submit(v.batchRequest("alice", "b", "gb", "5")); !a.ok() || len(resp.Chains) != 2 || !resp.AlreadySubmitted {
		t.Fatalf("batch b sent again whole: %v, want answered as submitted already", a)
	}
	v.wholeBatch(t, "alice", "b", "gb")

	// The chains committed, the request failed after (its marking of the
	// steps as queued refused here, as a commit that broke would): the
	// batch stays with them, and the same request sent again completes it.
	if _, err := v.db.SQL().Exec(`CREATE TRIGGER refuse_queued BEFORE UPDATE OF state ON steps WHEN NEW.state = 'queued'
		BEGIN SELECT RAISE(ABORT, 'the test refuses the marking'); END`); err != nil {
		t.Fatal(err)
	}
	if _, a := submit(v.batchRequest("alice", "c", "gc", "5")); a.ok() {
		t.Fatalf("batch c with its marking refused: %v, want a failure", a)
	}
	if _, err := v.db.SQL().Exec(`DROP TRIGGER refuse_queued`); err != nil {
		t.Fatal(err)
	}
	if resp, a := submit(v.batchRequest("alice", "c", "gc", "5")); !a.ok() || len(resp.Chains) != 2 {
		t.Fatalf("batch c sent again after its chains committed: %v", a)
	}
	v.wholeBatch(t, "alice", "c", "gc")

	// A different request under a name in use stays refused: other
	// arguments, other jobs, another group.
	other := v.batchRequest("alice", "b", "gb", "6")
	fewer := v.batchRequest("alice", "b", "gb", "5")
	fewer.Chains = fewer.Chains[:1]
	moved := v.batchRequest("alice", "b", "gmoved", "5")
	for what, req := range map[string]wire.SubmitRequest{"other arguments": other, "fewer jobs": fewer, "another group": moved} {
		if _, a := submit(req); a.status != 409 {
			t.Errorf("batch b again with %s: %v, want 409", what, a)
		}
	}
	v.wholeBatch(t, "alice", "b", "gb")
}
