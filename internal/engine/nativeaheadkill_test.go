package engine_test

import (
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A native submission of more than a statement's worth of chains inserts
// its work units ahead, beside the recording, and marks its steps queued
// while BOINC's commit runs, committing that after it. Killed -9 at random
// moments, and every other round as soon as BOINC holds a first work unit
// of it (its commit), it leaves no work unit without its step and no
// queued step without its work unit.
func TestNativeSubmissionAheadKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	longtest.ParallelWithoutRace(t)
	forEnginesCreate(t, engine.CreateNative, func(t *testing.T, e *engine.Engine, u store.User) {
		submissionKill9(t, e, u, longtest.Rounds(6, 3), 600, wire.Options{}, true)
	})
}
