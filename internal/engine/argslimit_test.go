package engine_test

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A chain's arguments travel on its create_work --stdin line, which
// create_work reads into a 4096-byte buffer and splits into at most 99
// words (the quoted command line one of them). Arguments the line cannot
// carry are refused when the chains are submitted, as a bad request that
// records nothing; arguments it can carry, however many, pass.
func TestSubmitArgsCreateWorkLine(t *testing.T) {
	f := newFixture(t)
	submit := func(name string, args []string) error {
		up, refs := f.upload("1 2 3\n", "0 0 0\n")
		_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
			Options: wire.Options{NumSteps: 1},
			Chains: []wire.ChainSpec{{Name: name, Args: args,
				Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
		return err
	}
	for name, args := range map[string][]string{
		"long":    {"-x", strings.Repeat("a", 5000)},
		"atlimit": {strings.Repeat("b", 4000)},
		"nul":     {"-x", "a\x00 b"},
	} {
		err := submit(name, args)
		if engine.KindOf(err) != engine.KindBadRequest {
			t.Errorf("%s: got %v (kind %v), want a bad request", name, err, engine.KindOf(err))
		}
		chains, cerr := f.e.State().Chains(f.ctx, f.u.ID, "g", name)
		if cerr != nil || len(chains) != 0 {
			t.Errorf("%s: refused, yet chains %v recorded (%v)", name, chains, cerr)
		}
	}
	// Many short arguments are one quoted word for create_work.
	if err := submit("many", strings.Fields(strings.Repeat("-v ", 150))); err != nil {
		t.Errorf("150 short arguments (one quoted word on the job line): %v", err)
	}
}
