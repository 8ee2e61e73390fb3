package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestInputCheckPoolFileWrittenOver: an operator copies another file onto
// an input's download link (as root, whatever its mode), which is the
// pool's own file: the input check must not take it for the content (one
// stat says "the same file as the pool's"), but report it as beyond
// repair; and the step whose download then fails fails saying so, rather
// than being made again for nothing.
func TestInputCheckPoolFileWrittenOver(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"max_step_attempts": 3, "max_error_results": 1, "max_total_results": 1})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	dl, _ := f.firstInput(wu)
	if r, err := f.e.CheckInputs(f.ctx, true); err != nil || len(r.Relinked)+len(r.Unrestorable) != 0 {
		t.Fatalf("before: %+v %v", r, err) // the pool file is remembered now
	}
	os.Chmod(dl, 0o644)
	if err := os.WriteFile(dl, []byte("something else altogether\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := f.e.CheckInputs(f.ctx, true)
	if err != nil || len(r.Unrestorable) != 1 || !strings.Contains(r.Unrestorable[0].Problem, "written over") {
		t.Fatalf("after the pool's file was written over: %+v %v", r, err)
	}
	f.world(false, true)
	c := f.waitChain("g", "c1", wire.StateFailed, time.Minute)
	if !strings.Contains(c.Error, "pool no longer has") || !strings.Contains(c.Error, "written over") {
		t.Fatalf("reason: %s", c.Error)
	}
}
