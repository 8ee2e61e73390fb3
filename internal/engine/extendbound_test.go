package engine_test

import (
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestExtendUpToTheSharedBound: a chain is extended up to the length a
// submission may have (wire.MaxChainSteps), and not beyond.
func TestExtendUpToTheSharedBound(t *testing.T) {
	f := newFixture(t)
	f.submit("g", "c1", 3)
	r, err := f.e.Extend(f.ctx, f.u, wire.ExtendRequest{ChainRef: wire.ChainRef{Group: "g"}, Steps: wire.MaxChainSteps - 3})
	if err != nil || r.Count != 1 {
		t.Fatalf("extending a 3-step chain to %d steps: %+v, %v", wire.MaxChainSteps, r, err)
	}
	r, err = f.e.Extend(f.ctx, f.u, wire.ExtendRequest{ChainRef: wire.ChainRef{Group: "g"}, Steps: 1})
	if err != nil || r.Count != 0 {
		t.Fatalf("extending a chain of %d steps by one more: %+v, %v; want it refused", wire.MaxChainSteps, r, err)
	}
}
