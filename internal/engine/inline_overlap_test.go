package engine_test

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/pool"
)

// The chains are recorded while their inline contents are still being
// written. A content whose download link disappears between its staging
// and the recording (pool collection) is staged again before create_work
// reads its job.
func TestInlineContentUnstagedMeanwhileIsStagedAgain(t *testing.T) {
	f := newFixture(t)
	req, contents := inlineRequest("g", 40)
	victim := ref(contents[5]).MD5
	var removed atomic.Int32
	defer engine.SetInlineStagedHook(func(e *engine.Engine, sum string) {
		if sum == victim {
			dst := e.Proj.DownloadPath(pool.PhysicalName(sum))
			os.Remove(dst + ".md5")
			os.Remove(dst)
			removed.Add(1)
		}
	})()
	resp, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(strings.Join(contents, "")))
	if err != nil {
		t.Fatal(err)
	}
	if removed.Load() != 1 || len(resp.Chains) != 40 {
		t.Fatalf("hook ran %d times, %d chains", removed.Load(), len(resp.Chains))
	}
	staged := f.e.Proj.DownloadPath(pool.PhysicalName(victim))
	if sum, n, ok := boinc.ReadSidecar(staged); !ok || sum != victim || n != int64(len(contents[5])) {
		t.Fatalf("content not staged again: sidecar %s %d %v", sum, n, ok)
	}
	for _, c := range resp.Chains {
		if f.boincWUs(c.FirstWU) != 1 {
			t.Fatalf("no work unit %s", c.FirstWU)
		}
	}
}

// An inline content found damaged while the chains are being recorded
// stops everything: no chain, no work unit. The good contents written
// before stay in the pool and in its index.
func TestInlineContentDamagedWhileRecording(t *testing.T) {
	f := newFixture(t)
	before := f.allWUs()
	req, contents := inlineRequest("g", 300)
	body := []byte(strings.Join(contents, ""))
	body[len(body)-2] = '9' // the last chain's coordinates
	_, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(string(body)))
	if engine.KindOf(err) != engine.KindBadRequest || !strings.Contains(err.Error(), "the bytes sent have MD5") {
		t.Fatalf("got %v", err)
	}
	if cs, _ := f.e.State().Chains(f.ctx, f.u.ID, "g", ""); len(cs) != 0 {
		t.Fatalf("%d chains left", len(cs))
	}
	if n := f.allWUs(); n != before {
		t.Fatalf("%d work units after the failed submission, %d before", n, before)
	}
	last := req.Inline[len(req.Inline)-1].MD5
	if f.e.Pool.Has(last) {
		t.Fatal("the damaged content is in the pool under its announced name")
	}
	var good []string
	for _, r := range req.Inline[:len(req.Inline)-1] {
		if f.e.Pool.Has(r.MD5) {
			good = append(good, r.MD5)
		}
	}
	if missing, err := f.e.State().PoolMissing(f.ctx, f.u.ID, good); err != nil || len(missing) != 0 {
		t.Fatalf("%d of %d contents written are not in the pool's index: %v", len(missing), len(good), err)
	}
}

// A recording refused (a name taken) while inline contents are still being
// written: nothing is created, and the contents the request wrote are gone
// again, from the pool and its index, before it answers (a failed request
// leaves no orphans for collection to find an hour later). Contents that
// were on the server before stay.
func TestInlineContentsRemovedWhenRecordingFails(t *testing.T) {
	f := newFixture(t)
	takenWU := f.submit("g", "taken", 1).Chains[0].FirstWU
	before := f.allWUs()
	req, contents := inlineRequest("g", 200)
	req.Chains[len(req.Chains)-1].Name = "taken"
	had := map[string]bool{}
	for _, r := range req.Inline {
		had[r.MD5] = f.e.Pool.Has(r.MD5)
	}
	_, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(strings.Join(contents, "")))
	if engine.KindOf(err) != engine.KindNameTaken {
		t.Fatalf("got %v", err)
	}
	if n := f.allWUs(); n != before {
		t.Fatalf("%d work units after the failed submission, %d before", n, before)
	}
	var sums []string
	for _, r := range req.Inline {
		if had[r.MD5] {
			if !f.e.Pool.Has(r.MD5) {
				t.Fatalf("content %s, pooled before the request, removed", r.MD5)
			}
			continue
		}
		if f.e.Pool.Has(r.MD5) {
			t.Fatalf("content %s of the failed request left in the pool", r.MD5)
		}
		if _, err := os.Stat(f.e.Proj.DownloadPath(pool.PhysicalName(r.MD5))); err == nil {
			t.Fatalf("download link of content %s left behind", r.MD5)
		}
		sums = append(sums, r.MD5)
	}
	if missing, err := f.e.State().PoolMissing(f.ctx, f.u.ID, sums); err != nil || len(missing) != len(sums) {
		t.Fatalf("%d of %d contents of the failed request still indexed: %v", len(sums)-len(missing), len(sums), err)
	}
	// The chain that held the name still has its inputs.
	_, s0, err := f.e.State().StepByWU(f.ctx, takenWU)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s0.Inputs {
		if m != "" && !f.e.Pool.Has(m) {
			t.Fatalf("input %s of an existing chain removed", m)
		}
	}
	// The same request under a free name goes through.
	req.Chains[len(req.Chains)-1].Name = "free"
	resp, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(strings.Join(contents, "")))
	if err != nil || len(resp.Chains) != 200 {
		t.Fatalf("resubmission: %d chains, %v", len(resp.Chains), err)
	}
}
