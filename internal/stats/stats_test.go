package stats

import (
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/store"
)

// TestComputeETA: the rate is the group's steps finished lately over the
// time since the first of them was created; the ETA is what remains in
// running chains at that rate; nothing is estimated without a rate.
func TestComputeETA(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	counts := []store.GroupCount{
		{User: "A", Group: "g", State: "running", Chains: 2, StepsDone: 4, Steps: 20},
		{User: "A", Group: "g", State: "done", Chains: 1, StepsDone: 10, Steps: 10},
		{User: "A", Group: "h", State: "running", Chains: 1, StepsDone: 0, Steps: 5},
		{User: "A", Group: "k", State: "failed", Chains: 1, StepsDone: 1, Steps: 5},
	}
	sc := store.StepCounts{Turnaround: make([]int, len(TurnaroundEdges)+1), PerHour: make([]int, Hours),
		Rates: map[string]store.GroupRate{"g": {N: 8, Start: now.Add(-2 * time.Hour).Unix()}}}
	sc.PerHour[0], sc.PerHour[23] = 3, 1
	f := Compute(counts, sc, now)
	if len(f.Groups) != 3 || f.Chains != 5 || f.StepsDone != 15 || f.Steps != 40 {
		t.Fatalf("%+v", f)
	}
	g := f.Groups[0]
	// 8 steps in 2 hours: 4 per hour; 16 left in running chains: 4 hours.
	if g.Name != "g" || g.Remaining != 16 || g.Rate != 4 || !g.HasETA || g.ETA != 4*time.Hour || g.Percent() != 14.0/30*100 {
		t.Fatalf("group g: %+v", g)
	}
	if h := f.Groups[1]; h.HasETA || h.Remaining != 5 {
		t.Fatalf("group h (no rate): %+v", h)
	}
	if k := f.Groups[2]; k.HasETA || k.Remaining != 0 {
		t.Fatalf("group k (failed): %+v", k)
	}
	// Per hour: oldest first, the last bin is the last hour.
	if f.PerHour[Hours-1].Count != 3 || f.PerHour[0].Count != 1 || f.PerHour[Hours-1].Label != "12h" {
		t.Fatalf("per hour %+v", f.PerHour)
	}
	if f.States[0].State != "running" || f.States[1].State != "done" || f.States[2].State != "failed" {
		t.Fatalf("states %+v", f.States)
	}
}
