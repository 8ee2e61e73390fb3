package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/standin"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// newFixtureWith is newFixture with top-level settings of rboinc.json
// changed first (the hooks the stand-in runs read them too).
func newFixtureWith(t *testing.T, settings map[string]any) *fixture {
	t.Helper()
	f := newFixture(t)
	path := filepath.Join(f.root, engine.ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	for k, v := range settings {
		cfg[k] = v
	}
	out, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	f.e.Close()
	e, err := engine.Open(f.ctx, f.root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	f.e = e
	return f
}

// world runs the stand-in's volunteer (and, with creator, rboinc's
// creator, which checks the inputs) until the test ends.
func (f *fixture) world(creator, volunteer bool) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	if creator {
		wg.Go(func() { f.e.RunCreator(ctx, 20*time.Millisecond, nil) })
	}
	if volunteer {
		// Its warnings and errors go to the test's log: shown when the
		// test fails (a chain that waited in vain), not otherwise.
		logs := slog.New(slog.NewTextHandler(testLogWriter{f.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		v := &standin.Volunteer{ProjectDir: f.e.Proj.Dir, Poll: 50 * time.Millisecond, Logger: logs}
		wg.Go(func() { v.Run(ctx) })
	}
	f.t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitChain waits until chain g/name is in state want (failing on any
// other end state), and returns it.
func (f *fixture) waitChain(g, name, want string, within time.Duration) wire.ChainStatus {
	f.t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := f.e.Status(f.ctx, f.u, g, name)
		if err != nil {
			f.t.Fatal(err)
		}
		if len(st.Chains) == 1 {
			c := st.Chains[0]
			if c.State == want {
				return c
			}
			if c.State != wire.StateRunning && c.State != wire.StateQueued {
				f.t.Fatalf("chain %s/%s is %s, want %s: %s", g, name, c.State, want, c.Error)
			}
			if time.Now().After(deadline) {
				f.logBOINC()
				f.t.Fatalf("chain %s/%s still %s after %v, want %s (%s)", g, name, c.State, within, want, c.Error)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// inputOf is the download path and content of a work unit's input at
// position 0 (coor_file).
func (f *fixture) firstInput(wu string) (string, string) {
	f.t.Helper()
	_, s, err := f.e.State().StepByWU(f.ctx, wu)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, sum := range s.Inputs {
		if sum != "" {
			return f.e.Proj.DownloadPath(pool.PhysicalName(sum)), sum
		}
	}
	f.t.Fatal("no input")
	return "", ""
}

func sameFile(a, b string) bool {
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// submitContent submits a two-step chain with its own coordinates.
func (f *fixture) submitContent(group, name, coor string) wire.SubmitResponse {
	f.t.Helper()
	up, refs := f.upload(coor, "0 0 0\n")
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up,
		Options: wire.Options{NumSteps: 2},
		Chains:  []wire.ChainSpec{{Name: name, Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// TestMissingInputLinkedAgain: an input of a waiting work unit taken out of
// download/ (BOINC's file deleter, an operator) is reported by doctor,
// linked again from the pool by the creator's input check within its
// interval (and counted), and the chain then completes.
func TestMissingInputLinkedAgain(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"input_check_seconds": 0.5})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	dl, sum := f.firstInput(wu)
	if !strings.HasPrefix(filepath.Base(dl), "rboinc_") || !sameFile(dl, f.e.Pool.Path(sum)) {
		t.Fatalf("input not staged as rboinc_<md5>: %s", dl)
	}
	os.Remove(dl + ".md5")
	if err := os.Remove(dl); err != nil {
		t.Fatal(err)
	}
	// doctor sees it (no creator runs yet).
	var problems []string
	for _, x := range setup.Doctor(f.ctx, f.root).Problems() {
		problems = append(problems, x.Msg)
	}
	if p := strings.Join(problems, "\n"); !strings.Contains(p, "missing from download/") || !strings.Contains(p, filepath.Base(dl)) || !strings.Contains(p, wu) {
		t.Fatalf("doctor does not report the missing input:\n%s", p)
	}
	f.world(true, false)
	waitFor(t, time.Minute, "the input is not back in download/", func() bool { return sameFile(dl, f.e.Pool.Path(sum)) })
	// The link, its sidecar and the count are three writes, in that order:
	// the file may be seen before the others.
	var counts map[string]uint64
	waitFor(t, 10*time.Second, "the relinked input has no sidecar or was not counted", func() bool {
		got, n, ok := boinc.ReadSidecar(dl)
		var err error
		counts, err = f.e.State().Counts(f.ctx)
		return ok && got == sum && n > 0 && err == nil && counts[store.CountInputsRelinked] >= 1
	})
	f.world(false, true)
	f.waitChain("g", "c1", wire.StateDone, 2*time.Minute)
}

// TestInputCheckFindsDamage: what the check finds and repairs without a
// volunteer: a file replaced by other content of the same size, a copy of
// the right content (a download hierarchy on another file system: not a
// problem), and an input whose pool content is gone too (reported, not
// looped on, the others still repaired).
func TestInputCheckFindsDamage(t *testing.T) {
	f := newFixture(t)
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	wu2 := f.submitContent("g", "c2", "7 8 9\n").Chains[0].FirstWU
	dl, sum := f.firstInput(wu)
	content, _ := os.ReadFile(dl)

	// Same size, other content.
	other := []byte(strings.Repeat("x", len(content)))
	os.Remove(dl)
	os.WriteFile(dl, other, 0o644)
	r, err := f.e.CheckInputs(f.ctx, false)
	if err != nil || len(r.Relinked) != 1 || r.Relinked[0].Problem != "different content" || r.Relinked[0].WU != wu {
		t.Fatalf("same-size replacement: %+v %v", r, err)
	}
	if r.WorkUnits != 2 {
		t.Fatalf("work units checked: %d", r.WorkUnits)
	}
	if b, _ := os.ReadFile(dl); string(b) != string(other) {
		t.Fatal("a check without repair changed the file")
	}
	if r, err = f.e.CheckInputs(f.ctx, true); err != nil || len(r.Relinked) != 1 || !sameFile(dl, f.e.Pool.Path(sum)) {
		t.Fatalf("repair: %+v %v", r, err)
	}

	// A copy of the right content is fine.
	os.Remove(dl)
	os.WriteFile(dl, content, 0o644)
	if r, err = f.e.CheckInputs(f.ctx, true); err != nil || len(r.Relinked) != 0 || len(r.Unrestorable) != 0 {
		t.Fatalf("a good copy: %+v %v", r, err)
	}

	// The content gone from the pool and from download/: reported, once
	// per check, and the other chain's damaged input still repaired.
	sum2 := md5s("7 8 9\n")
	dl2 := f.e.Proj.DownloadPath(pool.PhysicalName(sum2))
	if _, s2, _ := f.e.State().StepByWU(f.ctx, wu2); !slices.Contains(s2.Inputs, sum2) {
		t.Fatalf("%s does not read %s: %v", wu2, sum2, s2.Inputs)
	}
	os.Remove(dl2)
	os.Remove(dl)
	os.Chmod(filepath.Dir(f.e.Pool.Path(sum)), 0o755)
	if err := os.Remove(f.e.Pool.Path(sum)); err != nil {
		t.Fatal(err)
	}
	r, err = f.e.CheckInputs(f.ctx, true)
	if err != nil || len(r.Unrestorable) != 1 || r.Unrestorable[0].File != filepath.Base(dl) || len(r.Relinked) != 1 || !sameFile(dl2, f.e.Pool.Path(sum2)) {
		t.Fatalf("content gone from the pool: %+v %v", r, err)
	}
	// The creator's checks log and count it once, not at every check.
	var checks engine.InputChecks
	checks.Run(f.ctx, f.e)
	checks.Run(f.ctx, f.e)
	counts, _ := f.e.State().Counts(f.ctx)
	if counts[store.CountInputsUnrestorable] != 1 || counts[store.CountInputsRelinked] != 2 {
		t.Fatalf("counters: %v", counts)
	}
}

// standinResults reads a work unit's results in the stand-in's database.
func (f *fixture) standinResults(wuPrefix string) [][4]any {
	f.t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT r.outcome, r.client_state, r.exit_status, r.stderr_out FROM result r JOIN workunit w ON w.id = r.workunitid
		WHERE w.name LIKE ? ORDER BY r.id`, wuPrefix+"%")
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out [][4]any
	for rows.Next() {
		var o, cs, ex int
		var se string
		if err := rows.Scan(&o, &cs, &ex, &se); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, [4]any{o, cs, ex, se})
	}
	return out
}

// TestDownloadErrorRemakesStep: a volunteer that cannot download an input
// (gone from download/ before anything linked it again) reports the
// result as a real client does (outcome CLIENT_ERROR, client_state
// FILES_DOWNLOADING, exit_status -186); rboinc links the input again and
// makes the step again without counting an attempt: with one attempt
// allowed, the chain still completes.
func TestDownloadErrorRemakesStep(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"max_step_attempts": 1, "max_error_results": 1, "max_total_results": 1})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	dl, _ := f.firstInput(wu)
	os.Remove(dl + ".md5")
	if err := os.Remove(dl); err != nil {
		t.Fatal(err)
	}
	// No creator runs: the hook does its work, and nothing checks inputs
	// before the volunteer tries the download.
	f.world(false, true)
	c := f.waitChain("g", "c1", wire.StateDone, 2*time.Minute)
	rs := f.standinResults(wu)
	if len(rs) != 1 || rs[0][0] != 3 || rs[0][1] != 1 || rs[0][2] != -186 || !strings.Contains(rs[0][3].(string), "WU download error") || !strings.Contains(rs[0][3].(string), "-224 (permanent HTTP error)") {
		t.Fatalf("the failed download's result: %v", rs)
	}
	chain, _, err := f.e.State().StepByWU(f.ctx, c.WU)
	if err != nil {
		t.Fatal(err)
	}
	steps, attempts, err := f.e.State().ChainSteps(f.ctx, chain.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 1 || attempts[0].WU != wu || !strings.HasPrefix(attempts[0].Reason, store.ReasonInputDownload) || steps[0].Attempts != 1 {
		t.Fatalf("step 0: %+v, earlier attempts %+v", steps[0], attempts)
	}
}

// TestDownloadErrorContentGone: when the pool no longer has the input
// either, the chain fails at once, saying which input is gone.
func TestDownloadErrorContentGone(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"max_step_attempts": 3, "max_error_results": 1, "max_total_results": 1})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	dl, sum := f.firstInput(wu)
	os.Remove(dl)
	os.Remove(f.e.Pool.Path(sum))
	f.world(false, true)
	c := f.waitChain("g", "c1", wire.StateFailed, 2*time.Minute)
	if !strings.Contains(c.Error, "input download failed") || !strings.Contains(c.Error, filepath.Base(dl)) || !strings.Contains(c.Error, "pool no longer has") {
		t.Fatalf("reason: %s", c.Error)
	}
	if n := f.boincWUs(wu); n != 1 {
		t.Fatalf("%d work units", n)
	}
}

// TestLegacyJFWorkUnit: a work unit created before rboinc named its inputs
// rboinc_<md5> (its xml_doc and download/ say jf_<md5>) still has its
// inputs linked again when they go missing, completes, and collection then
// takes its jf_ links away, while a jf_ file of BOINC's own job-file
// staging (not a link of the pool) stays.
func TestLegacyJFWorkUnit(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"input_check_seconds": 0.5})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	_, s0, err := f.e.State().StepByWU(f.ctx, wu)
	if err != nil {
		t.Fatal(err)
	}
	legacy := makeLegacyJF(t, f, wu, s0.Inputs, true)
	// BOINC's job-file staging has a file of its own under a jf_ name.
	foreignSum := md5s("BOINC's own job file\n")
	foreign := f.e.Proj.DownloadPath(pool.LegacyPhysicalName(foreignSum))
	os.MkdirAll(filepath.Dir(foreign), 0o755)
	os.WriteFile(foreign, []byte("BOINC's own job file\n"), 0o644)

	// One of them goes missing: linked again under its jf_ name.
	os.Remove(legacy[0])
	f.world(true, false)
	waitFor(t, time.Minute, "the jf_ input is not back", func() bool {
		_, err := os.Stat(legacy[0])
		return err == nil
	})
	f.world(false, true)
	f.waitChain("g", "c1", wire.StateDone, 2*time.Minute)
	for _, p := range legacy {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s gone before collection: %v", p, err)
		}
	}
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range legacy {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left after collection", p)
		}
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("collection removed BOINC's own job file: %v", err)
	}
}

// makeLegacyJF makes work unit wu what an older rboinc created: its
// xml_doc names its inputs jf_<md5>, and download/ has those links (the
// rboinc_ ones removed when dropCurrent). It returns the jf_ paths, each
// once.
func makeLegacyJF(t *testing.T, f *fixture, wu string, inputs []string, dropCurrent bool) []string {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE workunit SET xml_doc = replace(xml_doc, 'rboinc_', 'jf_') WHERE name = ?`, wu); err != nil {
		t.Fatal(err)
	}
	var legacy []string
	for _, sum := range inputs {
		if sum == "" {
			continue
		}
		old := f.e.Proj.DownloadPath(pool.LegacyPhysicalName(sum))
		os.MkdirAll(filepath.Dir(old), 0o755)
		if err := os.Link(f.e.Pool.Path(sum), old); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		boinc.WriteSidecar(old, sum, 1)
		if dropCurrent {
			cur := f.e.Proj.DownloadPath(pool.PhysicalName(sum))
			os.Remove(cur)
			os.Remove(cur + ".md5")
		}
		if !slices.Contains(legacy, old) {
			legacy = append(legacy, old)
		}
	}
	return legacy
}

// testLogWriter writes each log line to a test's log.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
