package engine_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// submitterSpec is what the submitting process reads (the shared test
// build's internal/testbin/submitter, built without -race: see its package
// comment): a server's submissions in a process of its own, one after the
// other, each announced by a line "go" on its standard output, which the
// tests kill -9.
type submitterSpec struct {
	Root     string
	UserID   int64
	User     string
	Requests []wire.SubmitRequest
}

// startSubmitter starts a submitting process for req on root.
func startSubmitter(t *testing.T, root string, u store.User, req wire.SubmitRequest, log io.Writer) *exec.Cmd {
	t.Helper()
	cmd := submitterCmd(t, root, u, req)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// submitterCmd is a submitting process for reqs on root, not started.
func submitterCmd(t *testing.T, root string, u store.User, reqs ...wire.SubmitRequest) *exec.Cmd {
	t.Helper()
	spec, err := json.Marshal(submitterSpec{Root: root, UserID: u.ID, User: u.Name, Requests: reqs})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "submit.json")
	if err := os.WriteFile(path, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.Command(submitterExe, path)
}

// wrapCreateWork replaces the project's bin/create_work with a script that
// runs the stand-in's create_work as script says ({{cw}} stands for its
// command); the original comes back at restore.
func wrapCreateWork(t *testing.T, e *engine.Engine, script string) (restore func()) {
	t.Helper()
	path := filepath.Join(e.Proj.Dir, "bin", "create_work")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cw string
	for _, l := range strings.Split(string(orig), "\n") {
		if c, ok := strings.CutPrefix(l, "exec "); ok {
			cw = c
		}
	}
	if cw == "" {
		t.Fatalf("bin/create_work runs no command this test knows:\n%s", orig)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+strings.ReplaceAll(script, "{{cw}}", cw)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := os.WriteFile(path, orig, 0o755); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(restore)
	return restore
}

// stepZeroStates counts the states of step 0 of group's chains.
func stepZeroStates(t *testing.T, e *engine.Engine, u store.User, group string) map[string]int {
	t.Helper()
	ctx := context.Background()
	cs, err := e.State().Chains(ctx, u.ID, group, "")
	if err != nil {
		t.Fatal(err)
	}
	var wus []string
	for _, c := range cs {
		wus = append(wus, c.WU(0))
	}
	st, err := e.State().StepStates(ctx, wus)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range st {
		out[s.Step]++
	}
	return out
}

// polled polls cond every 100 ms until it holds or d passed; false then.
func polled(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// startCreator starts `rboinc-server creator` on root, as a server's
// start would; it is killed at the end of the test.
func startCreator(t *testing.T, root string, log io.Writer) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(serverExe, "creator", "--root", root)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	return cmd
}

// syncBuffer is a log written by processes and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReviveAfterKill9: a submitting process killed -9 after recording its
// chains (step 0 "creating") and before recording their work units leaves
// them to nobody; a creator started afterwards creates them within a
// minute (not after the hour of steps whose process is unknown), and
// exactly once: killed before create_work inserted the work units, or
// after (BOINC holds them then: the creator records them as created).
func TestReviveAfterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	// Mostly waiting (on the submission, the creator): beside the other waiting tests.
	t.Parallel()
	for _, tc := range []struct {
		name, script string
	}{
		// create_work waits before reading its input: the kill finds no
		// work unit made.
		{"before create_work inserts", "sleep 30\nexec {{cw}}"},
		// create_work made the work units; the kill comes before the
		// submission records them.
		{"after create_work inserted", "{{cw}}\nrc=$?\nsleep 30\nexit $rc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			reviveAfterKill(t, f.e, f.e, f.u, tc.script, nil)
		})
	}
}

// reviveAfterKill submits chains through a process on eSubmit's root that
// it kills -9 mid-submission, then starts a creator on eCreate's root and
// checks that their step 0 is created within a minute, once. beforeKill,
// when not nil, runs once the chains are recorded.
func reviveAfterKill(t *testing.T, eSubmit, eCreate *engine.Engine, u store.User, script string, beforeKill func()) {
	const n = 20
	ctx := context.Background()
	restore := wrapCreateWork(t, eSubmit, script)
	b := &benchEnv{tb: t, ctx: ctx, e: eSubmit, u: u}
	req := b.request("g", n, 2)
	var log syncBuffer
	sub := startSubmitter(t, eSubmit.Root, u, req, &log)
	inserted := strings.HasPrefix(script, "{{cw}}")
	if !polled(time.Minute, func() bool {
		if stepZeroStates(t, eSubmit, u, "g")["creating"] != n {
			return false
		}
		total, _ := boincCounts(t, eSubmit)
		return !inserted || total == n
	}) {
		total, _ := boincCounts(t, eSubmit)
		t.Fatalf("the submission did not get to the kill point: steps %v, %d work units; its log:\n%s", stepZeroStates(t, eSubmit, u, "g"), total, log.String())
	}
	if beforeKill != nil {
		beforeKill()
	}
	sub.Process.Signal(syscall.SIGKILL)
	sub.Wait()
	restore()
	killed := time.Now()
	if total, _ := boincCounts(t, eSubmit); inserted != (total == n) {
		t.Fatalf("BOINC has %d work units at the kill", total)
	}

	startCreator(t, eCreate.Root, &log)
	if !polled(time.Minute, func() bool { return stepZeroStates(t, eCreate, u, "g")[store.StateQueued] == n }) {
		t.Fatalf("a minute after the kill step 0 of the chains is %v, want %d queued; log:\n%s", stepZeroStates(t, eCreate, u, "g"), n, tail([]byte(log.String()), 3000))
	}
	t.Logf("the chains' step 0 created %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	if total, _ := boincCounts(t, eCreate); total != n {
		t.Errorf("BOINC has %d work units, want %d: created twice or lost", total, n)
	}
	st, err := eCreate.Status(ctx, u, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Chains {
		if c.State != wire.StateRunning {
			t.Errorf("chain %s is %s, want running", c.Name, c.State)
		}
	}
}

// TestSlowSubmissionKeepsItsSteps: a submission whose create_work takes
// longer than three lease times keeps its steps while a creator looks
// (started when the lease would have run out unrenewed): the creator
// takes none of them, the submission succeeds, each work unit is made
// once.
func TestSlowSubmissionKeepsItsSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	// Restored in a cleanup registered before the fixture's: cleanups run
	// last-first, so after the engine (whose lease renewal reads
	// LeaseTTL) is closed; a defer raced with the renewal under -race.
	oldTTL := store.LeaseTTL
	t.Cleanup(func() { store.LeaseTTL = oldTTL })
	store.LeaseTTL = 2 * time.Second
	const n = 10
	f := newFixture(t)
	wrapCreateWork(t, f.e, "sleep 12\nexec {{cw}}")
	b := &benchEnv{tb: t, ctx: f.ctx, e: f.e, u: f.u}
	req := b.request("g", n, 2)
	done := make(chan error, 1)
	go func() {
		_, err := f.e.Submit(f.ctx, f.u, req)
		done <- err
	}()
	if !polled(time.Minute, func() bool { return stepZeroStates(t, f.e, f.u, "g")["creating"] == n }) {
		t.Fatalf("the chains were not recorded: %v", stepZeroStates(t, f.e, f.u, "g"))
	}
	time.Sleep(3 * store.LeaseTTL)
	var log syncBuffer
	startCreator(t, f.root, &log)
	// The creator looks at once, and every 10 s.
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the slow submission failed: %v; creator's log:\n%s", err, log.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the submission did not end")
	}
	if strings.Contains(log.String(), "half-created") {
		t.Errorf("the creator took steps of a live submission:\n%s", log.String())
	}
	if got := stepZeroStates(t, f.e, f.u, "g"); got[store.StateQueued] != n {
		t.Errorf("step 0 of the chains is %v, want %d queued", got, n)
	}
	if total, _ := boincCounts(t, f.e); total != n {
		t.Errorf("BOINC has %d work units, want %d", total, n)
	}
}

// TestReviveAcrossHosts: two server roots on one MariaDB (state and
// BOINC's database). A submission on host A is killed -9 mid-submission;
// host B's creator, which cannot see A's processes (its lease row is made
// to name another host), takes the steps over once A's lease runs out by
// the database's clock: within a minute, each work unit once.
func TestReviveAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	// Mostly waiting (on a lease to run out): beside the other waiting tests.
	t.Parallel()
	mariadbtest.Shared(t)
	stateDSN := mariadbtest.NewDB(t)
	eA, _, eB, u := twoHosts(t, setup.Options{Root: t.TempDir(), Exe: serverExe, URLBase: "http://127.0.0.1:1",
		StateDB: "mysql://" + stateDSN, BoincDB: "mysql://" + mariadbtest.NewDB(t)})
	reviveAfterKill(t, eA, eB, u, "sleep 30\nexec {{cw}}", func() {
		// As if A were another machine: B judges by the lease alone.
		db, err := sql.Open("mysql", stateDSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("UPDATE rboinc_process_leases SET host = 'another-host'"); err != nil {
			t.Fatal(err)
		}
	})
}
