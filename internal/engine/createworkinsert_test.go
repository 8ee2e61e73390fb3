package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// BOINC's create_work inserts an assigned job as soon as it reads it, and
// other jobs in ~1 MB chunks before its input ends. A submitting process
// killed -9 at random moments in create_work mode leaves no work unit
// without its chain, either way.
func TestCreateWorkSubmissionKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	longtest.ParallelWithoutRace(t)
	t.Run("assigned", func(t *testing.T) {
		forEnginesCreate(t, engine.CreateWithCreateWork, func(t *testing.T, e *engine.Engine, u store.User) {
			submissionKill9(t, e, u, longtest.Rounds(8, 4), 150, wire.Options{AssignUserAll: 1}, true)
		})
	})
	t.Run("1 MB chunks", func(t *testing.T) {
		forEnginesCreate(t, engine.CreateWithCreateWork, func(t *testing.T, e *engine.Engine, u store.User) {
			submissionKill9(t, e, u, longtest.Rounds(6, 3), 1500, wire.Options{}, true)
		})
	})
}

// A submission whose request is cancelled (the client went away) while
// create_work inserts assigned jobs as it reads them leaves no work unit
// without its chain: none while the chains are being recorded, and those
// made before create_work was stopped are cancelled in BOINC.
func TestCreateWorkCancelledSubmission(t *testing.T) {
	longtest.ParallelWithoutRace(t)
	forEnginesCreate(t, engine.CreateWithCreateWork, func(t *testing.T, e *engine.Engine, u store.User) {
		b := &benchEnv{tb: t, ctx: context.Background(), e: e, u: u}
		for round, o := range []wire.Options{{AssignUserAll: 1}, {}} {
			req := b.request([]string{"assigned", "chunks"}[round], 1500, 2)
			o.NumSteps = req.Options.NumSteps
			req.Options = o
			count, closeDB := boincWUCounter(t, e)
			before := count()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := e.Submit(ctx, u, req)
				done <- err
			}()
			// Stop it once BOINC has a first work unit of it (then only
			// wait for it to end: there is nothing more to look at).
			var err error
		wait:
			for {
				select {
				case err = <-done:
					break wait
				case <-time.After(5 * time.Millisecond):
					if ctx.Err() == nil && count() > before {
						cancel()
					}
				}
			}
			cancel()
			closeDB()
			steps := checkWUsHaveSteps(t, e)
			t.Logf("%+v: submission: %v; steps by state %v", o, err, steps)
		}
	})
}
