package engine_test

import (
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
)

// A chain held back in its group (more than catchup_steps behind the most
// advanced) gets its next work unit at catchup_priority.
func TestCatchupPriority(t *testing.T) {
	f := newFixture(t)
	resp := f.submit("g", "a", 6)
	resp2 := f.submit("g", "b", 6)
	wu := resp.Chains[0].FirstWU
	for step := 0; step < 4; step++ {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
			t.Fatal(err)
		}
		c, _, _ := f.e.State().StepByWU(f.ctx, wu)
		s, err := f.e.State().StepOf(f.ctx, c, step+1)
		if err != nil {
			t.Fatal(err)
		}
		wu = s.WU
	}
	b0 := resp2.Chains[0].FirstWU
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: b0, Files: f.outputs(b0)}); err != nil {
		t.Fatal(err)
	}
	c, _, _ := f.e.State().StepByWU(f.ctx, b0)
	s, _ := f.e.State().StepOf(f.ctx, c, 1)
	bdb, err := f.e.OpenBoincDB(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var prio, leadPrio int
	if err := bdb.QueryRow(`SELECT priority FROM workunit WHERE name = ?`, s.WU).Scan(&prio); err != nil || prio != 2000 {
		t.Errorf("the held-back chain's next work unit has priority %d (%v), want 2000", prio, err)
	}
	if err := bdb.QueryRow(`SELECT priority FROM workunit WHERE name = ?`, wu).Scan(&leadPrio); err != nil || leadPrio >= 2000 {
		t.Errorf("the leading chain's work unit has priority %d (%v)", leadPrio, err)
	}
}

// A step BOINC holds longer than late_after gets one more replica, its
// priority raised by 1000, once.
func TestLateDuplication(t *testing.T) {
	t.Parallel() // it sleeps past late_after: beside other tests
	f := newFixture(t)
	f.e.Cfg.LateAfterHours = 1 // not late yet, however slow the machine
	wu := f.submit("g", "slow", 3).Chains[0].FirstWU
	if n, err := f.e.DuplicateLate(f.ctx); err != nil || n != 0 {
		t.Fatalf("before late_after: %d, %v", n, err)
	}
	f.e.Cfg.LateAfterHours = 1.0 / 3600 // a second
	time.Sleep(2100 * time.Millisecond)
	if n, err := f.e.DuplicateLate(f.ctx); err != nil || n != 1 {
		t.Fatalf("late: %d, %v", n, err)
	}
	if n, err := f.e.DuplicateLate(f.ctx); err != nil || n != 0 {
		t.Fatalf("again: %d, %v (want once)", n, err)
	}
	bdb, err := f.e.OpenBoincDB(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var target, prio int
	if err := bdb.QueryRow(`SELECT target_nresults, priority FROM workunit WHERE name = ?`, wu).Scan(&target, &prio); err != nil || target != 2 || prio < 1000 {
		t.Errorf("target_nresults %d, priority %d (%v); want 2 and raised by 1000", target, prio, err)
	}
}
