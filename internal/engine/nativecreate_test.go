package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// breakCreateWork replaces the project's bin/create_work with one that
// fails: native creation must not run it.
func breakCreateWork(t testing.TB, e *engine.Engine) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.Proj.Dir, "bin", "create_work"), []byte("#!/bin/sh\necho create_work ran >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestNativeCreationChains runs chains through submission and the native
// assimilator with native creation, BOINC's database on SQLite and on
// MariaDB: every step's work unit is inserted by rboinc (create_work
// would fail), once.
func TestNativeCreationChains(t *testing.T) {
	forEnginesCreate(t, engine.CreateNative, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		breakCreateWork(t, e)
		resp := submitChains(t, e, u, "g", 20, 3)
		if total, _ := boincCounts(t, e); total != 20 {
			t.Fatalf("%d work units after submitting 20 chains", total)
		}
		settle(t, e, newAssimilator(t, e), nil)
		if total, ready := boincCounts(t, e); total != 60 || ready != 0 {
			t.Errorf("BOINC has %d work units (%d ready), want 60", total, ready)
		}
		// Native creation is handed every input's MD5 and size: staging
		// writes no .md5 sidecar (a file per new content).
		if n := countSidecars(t, e.Proj.DownloadDir); n != 0 {
			t.Errorf("native creation left %d .md5 sidecars in the download hierarchy, want none", n)
		}
		st, err := e.Status(ctx, u, "g", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range st.Chains {
			if c.State != wire.StateDone {
				t.Errorf("chain %s: %s (%s)", c.Name, c.State, c.Error)
			}
		}
		// A step of a finished chain may not be created again: its work
		// unit exists.
		if _, err := e.Submit(ctx, u, wire.SubmitRequest{Queue: "langevin", Group: "g", Chains: []wire.ChainSpec{{Name: resp.Chains[0].Name}}}); err == nil {
			t.Error("a chain name was taken twice")
		}
	})
}

// TestNativeCreationRefusesUnknownSchema: on a BOINC database lacking a
// column native creation writes, the engine refuses native mode, naming
// the column, and changes nothing in the database.
func TestNativeCreationRefusesUnknownSchema(t *testing.T) {
	e := nativeRootCreate(t, "sqlite", engine.CreateNative)
	db, err := e.OpenBoincDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`ALTER TABLE workunit DROP COLUMN keywords`); err != nil {
		t.Fatal(err)
	}
	e2, err := engine.Open(context.Background(), e.Root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	err = e2.CheckCreation(context.Background())
	if err == nil || !strings.Contains(err.Error(), "workunit.keywords") || !strings.Contains(err.Error(), `"create": "create_work"`) {
		t.Fatalf("CheckCreation on a schema without workunit.keywords: %v", err)
	}
	u, _ := e2.State().AddUser(context.Background(), "bob", "h")
	b := &benchEnv{tb: t, ctx: context.Background(), e: e2, u: store.User{ID: u, Name: "bob"}}
	if _, err := e2.Submit(context.Background(), b.u, b.request("g", 1, 2)); err == nil || !strings.Contains(err.Error(), "workunit.keywords") {
		t.Fatalf("submission on that schema: %v", err)
	}
	if missing, err := db.MissingCreateColumns(context.Background()); err != nil || len(missing) != 1 {
		t.Fatalf("the schema was changed: missing %v, %v", missing, err)
	}
	if chains, _ := e2.State().Chains(context.Background(), u, "g", ""); len(chains) != 0 {
		t.Fatalf("a refused submission left chains: %+v", chains)
	}
	// The schema upgraded, the same engine creates natively: a refusal is
	// not kept.
	if _, err := db.Exec(`ALTER TABLE workunit ADD COLUMN keywords varchar(254) NOT NULL DEFAULT ''`); err != nil {
		t.Fatal(err)
	}
	if err := e2.CheckCreation(context.Background()); err != nil {
		t.Fatalf("after the column came back: %v", err)
	}
	if _, err := e2.Submit(context.Background(), b.u, b.request("g", 1, 2)); err != nil {
		t.Fatalf("submission after the column came back: %v", err)
	}
}

func TestCreateConfig(t *testing.T) {
	root := t.TempDir()
	if _, err := setup.Init(context.Background(), setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", Create: "fast"}); err == nil || !strings.Contains(err.Error(), "--create") {
		t.Fatalf("init --create fast: %v", err)
	}
	if _, err := setup.Init(context.Background(), setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", Create: "native"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.LoadConfig(root)
	if err != nil || cfg.Create != "native" {
		t.Fatalf("after init --create native: %q %v", cfg.Create, err)
	}
	b, _ := os.ReadFile(filepath.Join(root, engine.ConfigFile))
	os.WriteFile(filepath.Join(root, engine.ConfigFile), []byte(strings.Replace(string(b), `"create": "native"`, `"create": "Native"`, 1)), 0o600)
	if _, err := engine.LoadConfig(root); err == nil || !strings.Contains(err.Error(), `"create": "Native"`) {
		t.Fatalf("a bad create value: %v", err)
	}
}

// TestNativeSubmissionKill9 kills a process submitting chains with native
// creation (kill -9) at random moments. Afterwards no work unit is without
// its step and no queued step without its work unit; the steps it left
// being created are created by revival, each once.
func TestNativeSubmissionKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	longtest.ParallelWithoutRace(t)
	forEnginesCreate(t, engine.CreateNative, func(t *testing.T, e *engine.Engine, u store.User) {
		submissionKill9(t, e, u, longtest.Rounds(12, 5), 150, wire.Options{}, false)
	})
}

// submissionKill9 kills a process submitting two requests of perReq chains
// with options o, rounds times at random moments (with atFirstWU, every
// other round once BOINC has a first work unit of it), then checks that no
// work unit is without its step, nor a queued step without its work unit,
// and that revival creates what the kills left, each once. The tests
// that call it (and the assimilator's kill tests) run beside each other
// only without -race (longtest.ParallelWithoutRace).
func submissionKill9(t *testing.T, e *engine.Engine, u store.User, rounds, perReq int, o wire.Options, atFirstWU bool) {
	ctx := context.Background()
	b := &benchEnv{tb: t, ctx: ctx, e: e, u: u}
	window, made, creating, halfway := 300, 0, 0, 0
	for round := range rounds {
		reqs := []wire.SubmitRequest{b.request(fmt.Sprintf("g%da", round), perReq, 2), b.request(fmt.Sprintf("g%db", round), perReq, 2)}
		for i := range reqs {
			n := reqs[i].Options.NumSteps
			reqs[i].Options = o
			reqs[i].Options.NumSteps = n
		}
		roundStart := time.Now()
		cmd := submitterCmd(t, e.Root, u, reqs...)
		out, _ := cmd.StdoutPipe()
		var errs strings.Builder
		cmd.Stderr = &errs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n') // the first "go"
		wait := time.Duration(rand.IntN(window)) * time.Millisecond
		if atFirstWU && round%2 == 0 {
			// Every other round: as soon as BOINC has a first work unit of it.
			count, closeDB := boincWUCounter(t, e)
			had := count()
			for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if count() > had {
					break
				}
			}
			closeDB()
		} else {
			time.Sleep(wait)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		io.Copy(io.Discard, out)
		werr := cmd.Wait()
		before := made
		st := checkWUsHaveSteps(t, e)
		made = st["queued"] + st["creating"]
		halfway += st["creating"] - creating
		creating = st["creating"]
		t.Logf("round %d: killed after %v (window %d ms; exit %v), %d steps recorded, %d being created, in %v",
			round, wait, window, werr, made, creating, time.Since(roundStart).Round(time.Millisecond))
		switch {
		case werr == nil:
			window = max(window/2, 20) // it finished first: kill sooner
		case made == before:
			window = min(window*2, 5000) // killed before a commit: later
		}
	}
	t.Logf("%d steps of %d recorded were left being created by the kills", halfway, made)
	// Revival (forced: nothing runs now) creates what the kills left.
	reviveStart := time.Now()
	defer func() { t.Logf("revival and its checks took %v", time.Since(reviveStart).Round(time.Millisecond)) }()
	if _, err := e.State().ReviveCreating(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreatePending(ctx); err != nil {
		t.Fatal(err)
	}
	steps := checkWUsHaveSteps(t, e)
	if total, _ := boincCounts(t, e); total != steps["queued"] || steps["creating"]+steps["pending"] != 0 {
		t.Errorf("after revival: %d work units, steps by state %v", total, steps)
	}
	t.Logf("steps by state after revival: %v", steps)
}

// checkWUsHaveSteps checks both directions between BOINC's work units and
// the state's steps (a work unit cancelled in BOINC needs no step), and
// returns the steps by state.
func checkWUsHaveSteps(t *testing.T, e *engine.Engine) map[string]int {
	t.Helper()
	ctx := context.Background()
	db, err := e.OpenBoincDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wus := map[string]bool{} // name: live (not cancelled)
	rows, err := db.Query(`SELECT name, error_mask FROM workunit`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		var mask int
		rows.Scan(&n, &mask)
		wus[n] = mask&16 == 0 // WU_ERROR_CANCELLED: what rboinc withdrew
	}
	rows.Close()
	table := "steps"
	if os.Getenv("RBOINC_TEST_STATE_DB") == "mariadb" {
		table = store.TablePrefix + "steps"
	}
	srows, err := e.State().SQL().Query(`SELECT wu_name, state FROM ` + table)
	if err != nil {
		t.Fatal(err)
	}
	defer srows.Close()
	byState := map[string]int{}
	steps := map[string]bool{}
	for srows.Next() {
		var n, st string
		srows.Scan(&n, &st)
		steps[n] = true
		byState[st]++
		if _, ok := wus[n]; st == "queued" && !ok {
			t.Errorf("step %s is queued without its work unit", n)
		}
	}
	for n, live := range wus {
		if live && !steps[n] {
			t.Errorf("work unit %s has no step", n)
		}
	}
	return byState
}

// TestNativeRevivedStepExists: a step whose process died after its work
// unit was inserted and before it was recorded as queued is revived; its
// work unit is not created twice and its chain goes on.
func TestNativeRevivedStepExists(t *testing.T) {
	forEnginesCreate(t, engine.CreateNative, func(t *testing.T, e *engine.Engine, u store.User) {
		ctx := context.Background()
		resp := submitChains(t, e, u, "g", 3, 2)
		table := "steps"
		if os.Getenv("RBOINC_TEST_STATE_DB") == "mariadb" {
			table = store.TablePrefix + "steps"
		}
		// What a kill between the insert and the record leaves: the step
		// creating, owned by a process with no lease (this one lives).
		if _, err := e.State().SQL().Exec(`UPDATE `+table+` SET state = 'creating', owner = 'killed' WHERE wu_name = ?`, resp.Chains[1].FirstWU); err != nil {
			t.Fatal(err)
		}
		if _, err := e.State().ReviveCreating(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CreatePending(ctx); err != nil {
			t.Fatal(err)
		}
		st := checkWUsHaveSteps(t, e)
		if total, _ := boincCounts(t, e); total != 3 || st["queued"] != 3 {
			t.Errorf("%d work units, steps by state %v; want 3 queued", total, st)
		}
		s, err := e.Status(ctx, u, "g", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Chains {
			if c.State != wire.StateRunning {
				t.Errorf("chain %s: %s (%s)", c.Name, c.State, c.Error)
			}
		}
	})
}

// countSidecars counts the .md5 files under dir.
func countSidecars(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md5") {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
