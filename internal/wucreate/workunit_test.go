package wucreate

import (
	"testing"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// An assigned job's work unit is left to the scheduler, as create_work
// leaves it: transition_time never, not now (e2e/realboinc stage 9 found
// the difference on a real server).
func TestRowTransitionTime(t *testing.T) {
	for _, tc := range []struct {
		flags int
		want  int64
	}{{0, 1700000000}, {1, boincdb.Never}, {2, boincdb.Never}} {
		w := DefaultRow()
		w.CreateTime, w.TransitionerFlags = 1700000000, tc.flags
		if got := w.row(1).TransitionTime; got != tc.want {
			t.Errorf("transitioner_flags %d: transition_time %d, want %d", tc.flags, got, tc.want)
		}
	}
}
