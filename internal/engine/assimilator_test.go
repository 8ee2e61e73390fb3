package engine_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinctest"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/sqldb"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
	"github.com/rboinc/rboinc/workflow/wire"
)

// boincDone finishes the stand-in's undecided work units (boinctest).
func boincDone(tb testing.TB, e *engine.Engine, fail func(string) bool) int {
	tb.Helper()
	db, err := e.OpenBoincDB(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	n, err := boinctest.FinishAll(context.Background(), db, e.Proj, fail)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// boincCounts counts the stand-in's work units, and those ready for
// assimilation.
func boincCounts(tb testing.TB, e *engine.Engine) (total, ready int) {
	tb.Helper()
	db, err := e.OpenBoincDB(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(CASE WHEN assimilate_state = 1 THEN 1 ELSE 0 END), 0) FROM workunit`).Scan(&total, &ready); err != nil {
		tb.Fatal(err)
	}
	return total, ready
}

// boincWUCounter is boincCounts' total on one connection to BOINC's
// database, for the loops that ask every few milliseconds while a
// submission runs: opening the database for each look was most of such a
// loop's processor time. The returned function closes it.
func boincWUCounter(tb testing.TB, e *engine.Engine) (count func() int, closeDB func()) {
	tb.Helper()
	db, err := e.OpenBoincDB(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM workunit`).Scan(&n); err != nil {
			tb.Errorf("counting BOINC's work units: %v", err)
		}
		return n
	}, func() { db.Close() }
}

func newAssimilator(t testing.TB, e *engine.Engine) *engine.Assimilator {
	t.Helper()
	bdb, err := e.OpenBoincDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bdb.Close() })
	return &engine.Assimilator{E: e, BDB: bdb, Batch: 7}
}

// nativeRoot makes a server root whose stand-in keeps BOINC's database in
// the engine named (sqlite or mysql) and uses the native assimilator.
func nativeRoot(t testing.TB, engineName string) *engine.Engine {
	return nativeRootCreate(t, engineName, os.Getenv("RBOINC_TEST_CREATE"))
}

// nativeRootCreate is nativeRoot creating work units the way create says
// (rboinc.json "create").
func nativeRootCreate(t testing.TB, engineName, create string) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	o := setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", Assimilator: setup.AssimNative, StateDB: testStateDB(t), Create: create}
	if engineName == string(sqldb.MySQL) {
		o.BoincDB = "mysql://" + mariadbtest.NewDB(t)
	}
	testbin.Preinstall(o.Root, o.Exe)
	if _, err := setup.Init(ctx, o); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func forEngines(t *testing.T, f func(t *testing.T, e *engine.Engine, u store.User)) {
	forEnginesCreate(t, os.Getenv("RBOINC_TEST_CREATE"), f)
}

// forEnginesCreate is forEngines creating work units the way create says.
func forEnginesCreate(t *testing.T, create string, f func(t *testing.T, e *engine.Engine, u store.User)) {
	for _, name := range []string{string(sqldb.SQLite), string(sqldb.MySQL)} {
		t.Run(name, func(t *testing.T) {
			// Each engine has a root and a database of its own, and
			// the tests mostly wait on daemons: both at once.
			t.Parallel()
			if name == string(sqldb.SQLite) && os.Getenv("RBOINC_TEST_STATE_DB") == "mariadb" {
				// The stand-in's SQLite database runs with the SQLite
				// state (the run without RBOINC_TEST_STATE_DB makes both
				// engines' subtests); with the state in MariaDB, BOINC's
				// database is there too, as a real BOINC server's is. The
				// pairing of the two was a second run of each subtest
				// (the kill tests' full rounds among them) for nothing a
				// deployment has.
				t.Skip("rboinc's state in MariaDB: BOINC's database in MariaDB too (the SQLite one runs with the SQLite state)")
			}
			e := nativeRootCreate(t, name, create)
			id, err := e.State().AddUser(context.Background(), "alice", "hash-alice")
			if err != nil {
				t.Fatal(err)
			}
			f(t, e, store.User{ID: id, Name: "alice"})
		})
	}
}

func submitChains(t testing.TB, e *engine.Engine, u store.User, group string, n, steps int) wire.SubmitResponse {
	t.Helper()
	b := &benchEnv{tb: t, ctx: context.Background(), e: e, u: u}
	return b.submit(b.request(group, n, steps))
}

func TestNativeAssimilatorAdvancesChains(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		e.Cfg.RetryBackoff = 0.01
		resp := submitChains(t, e, u, "g", 20, 3)
		bad := resp.Chains[3].Name + "-"
		a := newAssimilator(t, e)
		// Every attempt of the bad chain's first step fails.
		settle(t, e, a, func(wu string) bool { return strings.HasPrefix(wu, bad) })
		total, ready := boincCounts(t, e)
		if want := 19*3 + 3; total != want || ready != 0 {
			t.Errorf("BOINC has %d work units (%d ready), want %d (0 ready): 3 steps of 19 chains, 3 attempts of the bad one", total, ready, want)
		}
		st, err := e.Status(ctx, u, "g", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range st.Chains {
			want := wire.StateDone
			if c.Name == resp.Chains[3].Name {
				want = wire.StateFailed
				if !strings.Contains(c.Error, "error mask 2") || !strings.Contains(c.Error, "attempt 3 of 3") {
					t.Errorf("failed chain's reason: %q", c.Error)
				}
			}
			if c.State != want {
				t.Errorf("chain %s: %s, want %s", c.Name, c.State, want)
			}
		}
		r, err := e.Results(ctx, u, "g", "")
		if err != nil || len(r.Files) != 19*3*3 {
			t.Errorf("%d result files, want %d (%v)", len(r.Files), 19*3*3, err)
		}
	})
}

// settle plays BOINC and runs assimilator passes until nothing is left to
// do (retries wait for their back-off).
func settle(t *testing.T, e *engine.Engine, a *engine.Assimilator, fail func(string) bool) {
	t.Helper()
	ctx := context.Background()
	idle := 0
	for round := 0; idle < 5; round++ {
		if round > 500 {
			t.Fatal("the chains do not settle")
		}
		made := boincDone(t, e, fail)
		n, err := a.Pass(ctx)
		if err != nil || n != made {
			t.Fatalf("round %d: pass assimilated %d of %d, %v", round, n, made, err)
		}
		if made == 0 {
			idle++
			time.Sleep(20 * time.Millisecond)
		} else {
			idle = 0
		}
	}
}

// A pass stopped after recording and before marking does it again: the
// work units are ready again, their outputs are gone from BOINC's upload
// hierarchy (taken), and no step is created twice.
func TestNativeAssimilatorRedoesUnmarked(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		submitChains(t, e, u, "g", 5, 2)
		boincDone(t, e, nil)
		a := newAssimilator(t, e)
		if n, err := a.Pass(ctx); err != nil || n != 5 {
			t.Fatalf("pass: %d, %v", n, err)
		}
		if _, err := a.BDB.ExecContext(ctx, `UPDATE workunit SET assimilate_state = 1 WHERE name LIKE '%-0-2-%'`); err != nil {
			t.Fatal(err)
		}
		filepath.Walk(e.Proj.UploadDir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				os.Remove(p) // BOINC's file deleter would not, but outputs may be gone
			}
			return nil
		})
		if n, err := newAssimilator(t, e).Pass(ctx); err != nil || n != 5 {
			t.Fatalf("pass again: %d, %v", n, err)
		}
		if total, ready := boincCounts(t, e); total != 10 || ready != 0 {
			t.Errorf("BOINC has %d work units (%d ready), want 10 (0 ready)", total, ready)
		}
	})
}

// A work unit made ready again after its step was recorded (BOINC, or a
// pass stopped before it marked) does not take its outputs again: the
// results retrieved and acknowledged meanwhile do not come back.
func TestNativeAssimilatorTakesRecordedOutputsOnce(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		resp := submitChains(t, e, u, "g", 4, 2)
		boincDone(t, e, nil)
		if n, err := newAssimilator(t, e).Pass(ctx); err != nil || n != 4 {
			t.Fatalf("pass: %d, %v", n, err)
		}
		taken, _ := filepath.Glob(filepath.Join(e.Root, "results", "*", "*"))
		if len(taken) == 0 {
			t.Fatal("no results taken")
		}
		for _, p := range taken {
			os.Remove(p) // retrieved and acknowledged
		}
		if _, err := e.State().SQL().ExecContext(ctx, `UPDATE results SET acked = 1`); err != nil {
			t.Fatal(err)
		}
		a := newAssimilator(t, e)
		if _, err := a.BDB.ExecContext(ctx, `UPDATE workunit SET assimilate_state = 1 WHERE name LIKE '%-0-2-%'`); err != nil {
			t.Fatal(err)
		}
		if n, err := a.Pass(ctx); err != nil || n != 4 {
			t.Fatalf("pass again: %d, %v", n, err)
		}
		if back, _ := filepath.Glob(filepath.Join(e.Root, "results", "*", resp.Chains[0].FirstWU+"_*")); len(back) != 0 {
			t.Errorf("results taken twice: %v", back)
		}
		if total, _ := boincCounts(t, e); total != 8 {
			t.Errorf("BOINC has %d work units, want 8", total)
		}
	})
}

// Outputs missing, or no canonical result: the work unit waits for a
// retry (logged), nothing is marked or lost, other work units go on.
func TestNativeAssimilatorLeavesBrokenWorkUnits(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		resp := submitChains(t, e, u, "g", 3, 2)
		boincDone(t, e, nil)
		missing := e.Proj.UploadPath(resp.Chains[0].FirstWU + "_0_r1804289383_0")
		kept, err := os.ReadFile(missing)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(missing)
		var log bytes.Buffer
		a := newAssimilator(t, e)
		a.Log = slog.New(slog.NewTextHandler(&log, nil))
		if _, err := a.BDB.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = 0 WHERE name = ?`, resp.Chains[1].FirstWU); err != nil {
			t.Fatal(err)
		}
		if n, err := a.Pass(ctx); err != nil || n != 1 {
			t.Fatalf("pass: %d, %v", n, err)
		}
		for _, want := range []string{"output files of canonical result", "no canonical result"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, log.String())
			}
		}
		if _, ready := boincCounts(t, e); ready != 2 {
			t.Errorf("%d work units left ready, want 2", ready)
		}
		// Nothing is recorded for the work unit left for a retry: the retry
		// takes its outputs. (The files its takes made may stay meanwhile:
		// another host's record may have made them its results; the orphan
		// sweeper removes those no step ever records.)
		if r, err := e.Results(ctx, u, "g", resp.Chains[0].Name); err != nil || len(r.Files) != 0 {
			t.Errorf("results of a work unit left for a retry: %v, %v", r.Files, err)
		}
		// Logged once; the next pass does not retry before its time.
		log.Reset()
		if n, err := a.Pass(ctx); err != nil || n != 0 || log.Len() != 0 {
			t.Errorf("second pass: %d, %v, log %q", n, err, log.String())
		}
		// Repaired: a new daemon (or the retry) takes them.
		os.WriteFile(missing, kept, 0o644)
		if _, err := a.BDB.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = (SELECT id FROM result WHERE name = ?) WHERE name = ?`,
			resp.Chains[1].FirstWU+"_0", resp.Chains[1].FirstWU); err != nil {
			t.Fatal(err)
		}
		if n, err := newAssimilator(t, e).Pass(ctx); err != nil || n != 2 {
			t.Errorf("after repair: %d, %v", n, err)
		}
		r, err := e.Results(ctx, u, "g", resp.Chains[0].Name)
		if err != nil || len(r.Files) != 3 {
			t.Fatalf("results after repair: %v, %v", r.Files, err)
		}
		for _, f := range r.Files {
			rf, _, err := e.OpenResult(ctx, u, "g", f.Name)
			if err != nil {
				t.Errorf("after repair: %v", err)
				continue
			}
			rf.Close()
		}
	})
}

// TestNativeAssimilatorKill9 kills the assimilator daemon at random
// moments, 50 times (15 under -race: see longtest.Rounds), while BOINC
// (played by the test) keeps finishing work units; afterwards every
// chain is done with each step once.
func TestNativeAssimilatorKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	longtest.ParallelWithoutRace(t)
	forEngines(t, assimilatorKill9)
}

// TestNativeCreationAssimilatorKill9 is TestNativeAssimilatorKill9 with
// the next steps' work units inserted by native creation: a daemon killed
// between inserting and recording leaves no step created twice or lost.
func TestNativeCreationAssimilatorKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	longtest.ParallelWithoutRace(t)
	forEnginesCreate(t, engine.CreateNative, assimilatorKill9)
}

func assimilatorKill9(t *testing.T, e *engine.Engine, u store.User) {
	// A kill round advances a chain by one step at most (BOINC, played by
	// the test, finishes work units only at a round's start), so chains of
	// kills+2 steps still have work at the last kill. Steps beyond that
	// only lengthen the final passes, one process and one step at a
	// time: under -race (15 kills) 17 steps instead of 30 took
	// TestNativeAssimilatorKill9 from 21 to 14 processor-seconds.
	kills := longtest.Rounds(50, 15)
	const chains = 12
	steps := min(30, kills+2)
	ctx := context.Background()
	submitChains(t, e, u, "g", chains, steps)
	logPath := filepath.Join(t.TempDir(), "assimilator.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	start := func() *exec.Cmd {
		cmd := exec.Command(serverExe, "assimilator", "--root", e.Root, "--sleep_interval", "0.01", "--batch", "5")
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	busy := 0 // kills that found work units ready
	// The window of the random moment widens while kills find the
	// daemon has made nothing yet (a loaded machine, the state on
	// MariaDB: its start-up alone can outlast 200 ms).
	window, made, idle := 200, chains, 0
	for range kills {
		boincDone(t, e, nil)
		before := fileSize(logPath)
		cmd := start()
		// The random moment counts from the daemon's first word: on a
		// loaded machine starting the process alone can take longer
		// than the whole window.
		for t0 := time.Now(); fileSize(logPath) == before && time.Since(t0) < 10*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(20+rand.IntN(window)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		total, ready := boincCounts(t, e)
		if ready > 0 {
			busy++
		}
		if total > made {
			made, idle = total, 0
		} else if idle++; idle >= 3 && window < 5000 {
			window, idle = window*2, 0
		}
	}
	t.Logf("%d of %d kills left work units ready", busy, kills)
	if total, _ := boincCounts(t, e); total <= chains {
		t.Errorf("the killed daemons created no next step (%d work units): they were killed before doing anything", total)
	} else {
		t.Logf("the killed daemons created %d of %d work units", total-chains, chains*(steps-1))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		boincDone(t, e, nil)
		cmd := exec.Command(serverExe, "assimilator", "--root", e.Root, "--one_pass")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("final pass: %v\n%s", err, out)
		}
		st, err := e.Status(ctx, u, "g", "")
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, c := range st.Chains {
			if c.State == wire.StateDone {
				done++
			}
		}
		if done == chains {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("%d of %d chains done after the kills; log:\n%s", done, chains, tail(log, 4000))
		}
	}
	total, ready := boincCounts(t, e)
	if total != chains*steps || ready != 0 {
		t.Errorf("BOINC has %d work units (%d ready), want %d: a step was created twice or lost", total, ready, chains*steps)
	}
	r, err := e.Results(ctx, u, "g", "")
	if err != nil || len(r.Files) != chains*steps*3 {
		t.Errorf("%d result files, want %d (%v)", len(r.Files), chains*steps*3, err)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestAssimilatorWaitsForTheDatabase: with BOINC's database unreachable
// (a port nothing listens on) or its credentials wrong, the daemon logs
// the reason, does not spin, and stops when told; --one_pass fails.
func TestAssimilatorWaitsForTheDatabase(t *testing.T) {
	// Each case waits 3 s on its context: beside the other waiting tests,
	// and beside each other (roots and loggers of their own).
	t.Parallel()
	for _, c := range []struct{ name, url string }{
		{"unreachable", "mysql://u:secret@tcp(127.0.0.1:1)/boinc"},
		{"credentials", ""}, // filled below: a real server, a wrong password
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := nativeRoot(t, string(sqldb.SQLite))
			url := c.url
			if url == "" {
				dsn := mariadbtest.NewDB(t)
				user, rest, _ := strings.Cut(dsn, ":")
				_, addr, _ := strings.Cut(rest, "@")
				url = "mysql://" + user + ":wrong@" + addr
			}
			e.Proj.DBURL = url
			var log bytes.Buffer
			e.Log = slog.New(slog.NewTextHandler(&lockedWriter{w: &log}, nil))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			t0 := time.Now()
			if err := e.RunAssimilator(ctx, engine.AssimilatorOptions{Sleep: 10 * time.Millisecond}); err != nil {
				t.Fatalf("RunAssimilator: %v", err)
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Errorf("stopped %v after its context", d-3*time.Second)
			}
			text := log.String()
			if n := strings.Count(text, "level=ERROR"); n < 1 || n > 3 {
				t.Errorf("%d error lines in 3 s (want one, not one per try):\n%s", n, text)
			}
			if !strings.Contains(text, "cannot use BOINC's database") || strings.Contains(text, "secret") || strings.Contains(text, ":wrong@") {
				t.Errorf("log:\n%s", text)
			}
			err := e.RunAssimilator(context.Background(), engine.AssimilatorOptions{OnePass: true})
			if err == nil || !strings.Contains(err.Error(), "BOINC database") {
				t.Errorf("one pass: %v", err)
			}
		})
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Two hosts' assimilators on one work unit: host B's takes its outputs
// ahead, host A's records the step meanwhile (its take finds B's files
// there and replaces them with the same outputs), then B finds the step
// done. B's takes are A's recorded results now: B must not undo them (the
// results were listed, then unreadable: "recorded but unreadable", the
// step's outputs lost to its user).
func TestNativeAssimilatorsOfTwoHostsKeepRecordedResults(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		submitChains(t, e, u, "g", 4, 2)
		boincDone(t, e, nil)
		n, err := newAssimilator(t, e).PassAround(ctx, func() {
			if n, err := newAssimilator(t, e).Pass(ctx); err != nil || n != 4 {
				t.Fatalf("the other host's pass: %d, %v", n, err)
			}
		})
		if err != nil {
			t.Fatalf("pass: %d, %v", n, err)
		}
		r, err := e.Results(ctx, u, "g", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 4*3 {
			t.Fatalf("%d results listed, want %d", len(r.Files), 4*3)
		}
		files, _ := filepath.Glob(filepath.Join(e.Root, "results", "*", "*"))
		if len(files) != len(r.Files) {
			t.Errorf("%d result files in the results area, %d listed: recorded results removed", len(files), len(r.Files))
		}
	})
}

// The outputs' descriptors a pass keeps open from their take to the wait
// for their data are all closed when it returns: those its records used,
// and those of takes no record used (a work unit left for a retry).
func TestNativeAssimilatorKeepsNoTakenOpen(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	e := nativeRoot(t, string(sqldb.SQLite))
	ctx := context.Background()
	u, err := e.State().AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	resp := submitChains(t, e, store.User{ID: u, Name: "alice"}, "g", 30, 2)
	boincDone(t, e, nil)
	// One work unit's first output is missing: its other outputs are
	// taken ahead, and no record uses them.
	if err := os.Remove(e.Proj.UploadPath(resp.Chains[5].FirstWU + "_0_r1804289383_0")); err != nil {
		t.Fatal(err)
	}
	a := newAssimilator(t, e) // batches of 7: takes ahead of the next batch too
	if n, err := a.Pass(ctx); err != nil || n != 29 {
		t.Fatalf("pass: %d, %v", n, err)
	}
	results := filepath.Join(e.Root, "results") + "/"
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if p, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(p, results) {
			t.Errorf("descriptor %s of %s left open", fd.Name(), p)
		}
	}
}

// Two hosts' assimilators on one batch, the other way round: host B's pass
// takes the batch's outputs ahead (its takes make the files), host A's
// records the steps meanwhile (its takes replace B's files with the same
// outputs) and marks them, then B's pass fails before its records (the
// long soak: B's transaction could not take the state database's write
// lock, "Lock wait timeout exceeded" or "invalid connection" with MariaDB
// killed; here B's context ends). B must not remove the files its takes
// made: they are A's recorded results now, and BOINC deletes the outputs
// A marked. In the soak, 518 work units' results were recorded but
// unreadable so.
func TestNativeAssimilatorFailedPassKeepsOtherHostsResults(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		submitChains(t, e, u, "g", 4, 2)
		boincDone(t, e, nil)
		_, err := newAssimilator(t, e).PassAround(ctx, func() {
			if n, err := newAssimilator(t, e).Pass(context.Background()); err != nil || n != 4 {
				t.Fatalf("the other host's pass: %d, %v", n, err)
			}
			stop() // B's pass fails before its records
		})
		if err == nil {
			t.Fatal("the pass whose context ended did not fail")
		}
		r, err := e.Results(context.Background(), u, "g", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 4*3 {
			t.Fatalf("%d results listed, want %d", len(r.Files), 4*3)
		}
		for _, f := range r.Files {
			rf, _, err := e.OpenResult(context.Background(), u, "g", f.Name)
			if err != nil {
				t.Errorf("a recorded result is lost: %v", err)
				continue
			}
			rf.Close()
		}
	})
}

// A step recorded whose results files went before its work unit was
// marked (in the long soak, another host's failed pass removed them
// between this pass's takes and its commit; the sync after the commit
// failed, and the next pass found the steps done and marked them, and
// BOINC deleted the outputs): the next pass takes them again from BOINC's
// upload hierarchy, with the content recorded, before it marks the work
// units.
func TestNativeAssimilatorRestoresRecordedResultsGone(t *testing.T) {
	forEngines(t, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		submitChains(t, e, u, "g", 4, 2)
		boincDone(t, e, nil)
		if n, err := newAssimilator(t, e).Pass(ctx); err != nil || n != 4 {
			t.Fatalf("pass: %d, %v", n, err)
		}
		taken, _ := filepath.Glob(filepath.Join(e.Root, "results", "*", "*"))
		if len(taken) != 4*3 {
			t.Fatalf("%d results taken, want %d", len(taken), 4*3)
		}
		for _, p := range taken[:5] {
			os.Remove(p)
		}
		// Not marked: the pass failed after its records.
		a := newAssimilator(t, e)
		if _, err := a.BDB.ExecContext(ctx, `UPDATE workunit SET assimilate_state = 1 WHERE name LIKE '%-0-2-%'`); err != nil {
			t.Fatal(err)
		}
		if n, err := a.Pass(ctx); err != nil || n != 4 {
			t.Fatalf("pass again: %d, %v", n, err)
		}
		r, err := e.Results(ctx, u, "g", "")
		if err != nil || len(r.Files) != 4*3 {
			t.Fatalf("%d results listed (%v), want %d", len(r.Files), err, 4*3)
		}
		for _, f := range r.Files {
			rf, _, err := e.OpenResult(ctx, u, "g", f.Name)
			if err != nil {
				t.Errorf("a recorded result is lost: %v", err)
				continue
			}
			rf.Close()
		}
		if total, _ := boincCounts(t, e); total != 8 {
			t.Errorf("BOINC has %d work units, want 8 (no step made twice)", total)
		}
	})
}
