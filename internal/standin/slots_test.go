package standin

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// createWUs makes n work units w0..w(n-1) of app rbtest, each with inputs
// of its own (the file deleter removes a work unit's inputs), in one
// create_work --stdin run.
func (tp *testProject) createWUs(n int) {
	tp.t.Helper()
	var in []string
	for i := range n {
		tp.stage(fmt.Sprintf("s%d.coor", i), "coordinates\n")
		tp.stage(fmt.Sprintf("s%d.psf", i), "topology\n")
		in = append(in, fmt.Sprintf("--wu_name w%d s%d.coor s%d.psf", i, i, i))
	}
	if _, errs, code := tp.createWork("", lines(in...), "--appname", "rbtest", "--stdin"); code != 0 {
		tp.t.Fatal(errs)
	}
}

// TestStandinSlotsFromConfig: config.xml's rboinc_standin_slots is how many
// results the volunteer computes at once (a project's many hosts), not the
// default 4; each of them sent by the scheduler's request for the free
// slots.
func TestStandinSlotsFromConfig(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("config.xml", strings.Replace(tp.read("config.xml"), "</config>",
		"    <rboinc_standin_slots>6</rboinc_standin_slots>\n    </config>", 1), 0o644)
	// Each run notes itself and waits for the release file.
	tp.write("apps/rbtest/run", "#!/bin/sh\ntouch ../../started.$$\nwhile [ ! -f ../../release ]; do sleep 0.02; done\n"+appUpper[10:], 0o755)
	tp.createWUs(8)
	tp.startVolunteerN(0)
	started := func() int {
		m, _ := filepath.Glob(tp.path("started.*"))
		return len(m)
	}
	tp.waitFor("6 results computed at once", func() bool { return started() >= 6 })
	time.Sleep(200 * time.Millisecond) // passes enough for a seventh to start, were there room
	if n := started(); n != 6 {
		t.Errorf("%d results computed at once, want the 6 slots of rboinc_standin_slots", n)
	}
	if n := tp.count(`SELECT count(*) FROM result WHERE server_state = ?`, serverInProgress); n != 6 {
		t.Errorf("%d results in progress, want 6", n)
	}
	tp.write("release", "", 0o644)
	tp.waitIdle()
	if n := tp.count(`SELECT count(*) FROM workunit WHERE canonical_resultid > 0 AND assimilate_state = ?`, assimDone); n != 8 {
		t.Errorf("%d of 8 work units validated and assimilated", n)
	}
}

// TestClaimSendsFreeSlots: one scheduler request sends as many results as
// the host has free slots, highest priority first, each once.
func TestClaimSendsFreeSlots(t *testing.T) {
	tp := setupCompute(t)
	tp.createWUs(5)
	s := tp.newSim()
	ctx := context.Background()
	if err := s.transitionDue(ctx, tp.p); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.db().ExecContext(ctx, `UPDATE result SET priority = 9 WHERE name = 'w3_0'`); err != nil {
		t.Fatal(err)
	}
	sent, err := s.claim(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range sent {
		names = append(names, r.name)
	}
	if got := strings.Join(names, " "); got != "w3_0 w0_0 w1_0" {
		t.Errorf("one request sent %q, want w3_0 w0_0 w1_0", got)
	}
	if n := tp.count(`SELECT count(*) FROM result WHERE server_state = ? AND hostid = ? AND sent_time > 0`, serverInProgress, volunteerHost); n != 3 {
		t.Errorf("%d results sent to the host, want 3", n)
	}
	if sent, err = s.claim(ctx, 50); err != nil || len(sent) != 2 {
		t.Errorf("the next request sent %d results (%v), want the 2 left", len(sent), err)
	}
}

// TestFreedSlotAsksTheSchedulerOnly: a result that ends frees its slot and
// the host gets the next one at once, without the other daemons' pass
// (the assimilator, the file deleter), which keep the poll's rhythm: with
// an hour's poll, every result is computed and none is assimilated yet.
func TestFreedSlotAsksTheSchedulerOnly(t *testing.T) {
	tp := setupCompute(t)
	tp.createWUs(3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v := &Volunteer{ProjectDir: tp.dir, Parallel: 1, Poll: time.Hour, HookRetry: 100 * time.Millisecond,
		AppTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))}
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	tp.waitFor("3 results computed", func() bool {
		return tp.count(`SELECT count(*) FROM result WHERE server_state = ? AND outcome = ?`, serverOver, outcomeSuccess) == 3
	})
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(tp.path("hook.log")); err == nil {
		t.Errorf("the assimilator ran between two polls: %q", tp.read("hook.log"))
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
