package engine_test

import (
	"fmt"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/workflow/wire"
)

// target_nresults is how many results BOINC's transitioner makes for a
// work unit at once: a user asking for a million would have it insert a
// million result rows per step. It may not go beyond the server's
// max_total_results (raising that to the request made the bound the
// user's own).
func TestSubmitReplicationBoundedByMaxTotalResults(t *testing.T) {
	f := newFixture(t)
	f.e.Cfg.MaxTotalResults = 10
	for i, tn := range []int{11, 1000000} {
		up, refs := f.upload("1 2 3\n", "0 0 0\n")
		_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
			Options: wire.Options{NumSteps: 1, TargetNResults: tn, MinQuorum: tn},
			Chains:  []wire.ChainSpec{{Name: fmt.Sprintf("c%d", i), Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
		if engine.KindOf(err) != engine.KindQuota {
			t.Errorf("target_nresults %d: got %v, want a refusal under max_total_results 10", tn, err)
		}
	}
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	if _, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
		Options: wire.Options{NumSteps: 1, TargetNResults: 10, MinQuorum: 2},
		Chains:  []wire.ChainSpec{{Name: "ok", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}); err != nil {
		t.Fatalf("target_nresults 10 under max_total_results 10: %v", err)
	}
}
