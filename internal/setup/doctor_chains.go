package setup

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
)

// defaultDelayBound is create_work's delay bound when the template sets
// none (BOINC's DEFAULT_DELAY_BOUND, 7 days).
const defaultDelayBound = 7 * 24 * time.Hour

// checkHookFailure reports the hook's last failure: BOINC's assimilator
// exits when the hook fails, and stays stopped until it is restarted.
func checkHookFailure(ctx context.Context, f *Findings, root string, db *store.DB) {
	fail, ok := spool.LastFailure(root)
	if !ok {
		return
	}
	since, err := db.LastStepFinished(ctx)
	at := fail.Time.Format(time.RFC3339)
	what := "the hook failed at " + at
	if fail.WU != "" {
		what += " on work unit " + fail.WU
	}
	if err == nil && since > fail.Time.Unix() {
		f.add(Note, "%s (%s); work units have been assimilated since, so BOINC's assimilator runs again", what, fail.Error)
		return
	}
	f.add(Problem, "%s: %s. A failing hook makes BOINC's assimilator for that application exit, and nothing of that application advances until it is restarted: fix the cause, then run bin/start (BOINC's crontab entry `bin/start --cron` restarts it within minutes)", what, fail.Error)
}

// checkStuckChains reports running chains whose work unit BOINC has held
// for longer than its delay bound: by then BOINC should have given up on
// the result and sent it again, so the chain is not moving (no volunteer
// gets the work, assignment is off, a daemon does not run).
func checkStuckChains(ctx context.Context, f *Findings, p *boinc.Project, db *store.DB) {
	cutoff := time.Now().Add(-time.Hour).Unix() // no delay bound is shorter in practice
	ws, err := db.WaitingSince(ctx, cutoff, 10000)
	if err != nil {
		f.add(Note, "cannot look for chains that do not move: %v", err)
		return
	}
	bounds := map[string]time.Duration{}
	var stuck []store.WaitingStep
	for _, w := range ws {
		b, ok := bounds[w.WUTmpl]
		if !ok {
			b = delayBound(filepath.Join(p.Dir, w.WUTmpl))
			bounds[w.WUTmpl] = b
		}
		if time.Since(time.Unix(w.Created, 0)) > b {
			stuck = append(stuck, w)
		}
	}
	if len(stuck) == 0 {
		return
	}
	first := stuck[0]
	f.add(Problem, "%s not moved for longer than their work units' delay bound (the oldest: %s/%s of %s, work unit %s, created %s): BOINC is not computing them. Check that its feeder, transitioner and assimilator run, that volunteers get work, and for assigned work that config.xml has <enable_assignment>",
		words.Count(len(stuck), "running chain has", "running chains have"), first.Group, first.Name, first.User, first.WU, time.Unix(first.Created, 0).Format(time.RFC3339))
}

// delayBound reads <delay_bound> (seconds) from a work-unit template.
func delayBound(path string) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return defaultDelayBound
	}
	s := string(b)
	i := strings.Index(s, "<delay_bound>")
	j := strings.Index(s, "</delay_bound>")
	if i < 0 || j < i {
		return defaultDelayBound
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s[i+len("<delay_bound>"):j]), 64)
	if err != nil || v <= 0 {
		return defaultDelayBound
	}
	return time.Duration(v * float64(time.Second))
}

// checkChainsMove opens the state database for the checks of chains that
// do not advance.
func checkChainsMove(ctx context.Context, f *Findings, root string, p *boinc.Project) {
	db, err := engine.OpenState(ctx, root)
	if err != nil {
		return // checkDB said so
	}
	defer db.Close()
	checkHookFailure(ctx, f, root, db)
	checkStuckChains(ctx, f, p, db)
	checkAssignment(ctx, f, p, db)
	checkInputs(ctx, f, root)
}

// checkAssignment: BOINC's scheduler sends assigned work (-assign_user_all)
// only when config.xml has <enable_assignment>; until then such chains
// wait for ever at their current step.
func checkAssignment(ctx context.Context, f *Findings, p *boinc.Project, db *store.DB) {
	n, one, err := db.AssignedRunning(ctx)
	if err != nil {
		f.add(Note, "cannot look for assigned chains: %v", err)
		return
	}
	switch {
	case n == 0:
	case p.EnableAssignment:
		f.add(OK, "%s of assigned work, and config.xml has <enable_assignment>", words.Count(n, "running chain", "running chains"))
	default:
		f.add(Problem, "%s submitted as assigned work (-assign_user_all; e.g. %s) but config.xml has no <enable_assignment>, so BOINC's scheduler never sends them and they wait with no step done: add <enable_assignment>1</enable_assignment> to <config> in %s (the scheduler reads it at its next request; no restart)", words.Count(n, "running chain was", "running chains were"), one, filepath.Join(p.Dir, "config.xml"))
	}
}
