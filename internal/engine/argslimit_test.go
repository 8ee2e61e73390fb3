package engine_test

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
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

// TestSubmitArgsRoomForExtend: a chain's later work units have longer
// names than its first when -extend makes it longer (the step and the
// step count are in the name), so arguments whose first line just fits
// would be refused by create_work after an -extend. They are refused at
// submission.
func TestSubmitArgsRoomForExtend(t *testing.T) {
	f := newFixture(t)
	submit := func(name string, args []string) error {
		up, refs := f.upload("1 2 3\n", "0 0 0\n")
		_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
			Options: wire.Options{NumSteps: 2},
			Chains: []wire.ChainSpec{{Name: name, Args: args,
				Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
		return err
	}
	if err := submit("probe", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	cs, err := f.e.State().Chains(f.ctx, f.u.ID, "g", "probe")
	if err != nil || len(cs) != 1 {
		t.Fatalf("the probe chain: %v %v", cs, err)
	}
	c := cs[0]
	_, s, err := f.e.State().StepByWU(f.ctx, c.WU(0))
	if err != nil {
		t.Fatal(err)
	}
	job := func(step, nsteps int, cmd string) boinc.Job {
		var files []string
		for _, sum := range s.Inputs {
			if sum != "" {
				files = append(files, pool.PhysicalName(sum))
			}
		}
		return boinc.Job{WUName: naming.Format("extnd", c.User, c.Group, step, nsteps, c.Tag), WUTemplate: c.WUTmpl, ResultTemplate: c.ResTmpl,
			Priority: c.Priority - step, Files: files, CommandLine: cmd}
	}
	// Arguments that make the first work unit's line as long as
	// create_work reads.
	arg := strings.Repeat("a", 4093-len(job(0, 2, "x").Line())+1)
	if _, err := boinc.CheckLine(job(0, 2, arg)); err != nil {
		t.Fatalf("the first line should just fit: %v", err)
	}
	if _, err := boinc.CheckLine(job(1, wire.MaxChainSteps, arg)); err == nil {
		t.Fatal("the second line after -extend to the most steps should not fit")
	}
	if err := submit("extnd", []string{arg}); engine.KindOf(err) != engine.KindBadRequest {
		t.Errorf("arguments whose line -extend would make too long: got %v, want a bad request at submission", err)
	}
}
