package engine_test

import (
	"context"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A priority beyond BOINC's 32-bit workunit.priority column is refused
// at submission: with native creation on MariaDB (strict mode) one such
// row fails the multi-row insert of a whole advance run, the other
// users' next steps with it.
func TestSubmitRefusesPriorityBeyondBoinc(t *testing.T) {
	forEnginesCreate(t, engine.CreateNative, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		b := &benchEnv{tb: t, ctx: ctx, e: e, u: u}
		for _, p := range []int{1 << 31, -(1 << 31) - 1, 1 << 40, -(1 << 31)} {
			req := b.request("bad", 1, 2)
			prio := p
			req.Options.Priority = &prio
			if _, err := e.Submit(ctx, u, req); engine.KindOf(err) != engine.KindBadRequest {
				t.Errorf("priority %d: got %v, want a bad request", p, err)
			}
		}
		req := b.request("edge", 1, 2)
		prio := 1 << 30
		req.Options.Priority = &prio
		if _, err := e.Submit(ctx, u, req); err != nil {
			t.Fatalf("priority %d: %v", prio, err)
		}
		// The priority control has the same bound.
		if _, err := e.SetPriority(ctx, u, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "edge"}, Priority: 1 << 31}); engine.KindOf(err) != engine.KindBadRequest {
			t.Errorf("set priority 1<<31: got %v, want a bad request", err)
		}
	})
}
