package engine_test

import (
	"context"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
)

// batch and assign_user_all beyond BOINC's 32-bit columns are refused as
// bad requests, not left to fail in BOINC's database (MariaDB's strict
// mode) as an internal error.
func TestSubmitRefusesIDsBeyondBoinc(t *testing.T) {
	forEnginesCreate(t, engine.CreateNative, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		b := &benchEnv{tb: t, ctx: ctx, e: e, u: u}
		req := b.request("b", 1, 1)
		req.Options.Batch = 1 << 31
		if _, err := e.Submit(ctx, u, req); engine.KindOf(err) != engine.KindBadRequest {
			t.Errorf("batch 1<<31: got %v, want a bad request", err)
		}
		req = b.request("a", 1, 1)
		req.Options.AssignUserAll = 1 << 31
		if _, err := e.Submit(ctx, u, req); engine.KindOf(err) != engine.KindBadRequest {
			t.Errorf("assign_user_all 1<<31: got %v, want a bad request", err)
		}
	})
}
