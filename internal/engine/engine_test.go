package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
	"github.com/rboinc/rboinc/workflow/wire"
)

var serverExe, submitterExe string

// TestMain takes the real rboinc-server binary from the run's shared
// build: the stand-in's bin/create_work runs it as a separate process,
// exactly as BOINC would.
func TestMain(m *testing.M) {
	dir, err := testbin.Build(testbin.Server, testbin.EngineSubmitter)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverExe = filepath.Join(dir, "rboinc-server")
	submitterExe = filepath.Join(dir, "submitter")
	code := m.Run()
	mariadbtest.StopShared()
	os.Exit(code)
}

// testStateDB is where a test root keeps its state: a MariaDB database of
// the test's own when RBOINC_TEST_STATE_DB=mariadb, else "" (the SQLite
// file in the root).
func testStateDB(t testing.TB) string {
	t.Helper()
	if os.Getenv("RBOINC_TEST_STATE_DB") != "mariadb" {
		return ""
	}
	mariadbtest.Shared(t)
	return "mysql://" + mariadbtest.NewDB(t)
}

type fixture struct {
	t    *testing.T
	ctx  context.Context
	root string
	e    *engine.Engine
	u    store.User
	bdb  *sql.DB // the stand-in's database, opened on first use (boincWUs)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	testbin.Preinstall(root, serverExe)
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: testStateDB(t)}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	id, err := e.State().AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, root: root, e: e, u: store.User{ID: id, Name: "alice"}}
}

// upload puts files into a fresh upload collection the way a client's
// WebDAV PUTs would, and returns the collection and the files' references.
func (f *fixture) upload(contents ...string) (string, []wire.FileRef) {
	f.t.Helper()
	up, err := f.e.NewUpload(f.ctx, f.u)
	if err != nil {
		f.t.Fatal(err)
	}
	var refs []wire.FileRef
	for _, c := range contents {
		tmp := filepath.Join(f.t.TempDir(), "x")
		os.WriteFile(tmp, []byte(c), 0o644)
		sum, n, _ := md5sum.File(tmp)
		os.WriteFile(filepath.Join(f.e.DAVRoot(f.u), up.ID, sum), []byte(c), 0o644)
		refs = append(refs, wire.FileRef{MD5: sum, Size: n})
	}
	return up.ID, refs
}

func (f *fixture) submit(group, name string, steps int) wire.SubmitResponse {
	f.t.Helper()
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up,
		Options: wire.Options{NumSteps: steps},
		Chains:  []wire.ChainSpec{{Name: name, Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// boincWUs counts work units of that name in the stand-in's database,
// through one handle for the fixture's life: opened per call, 150 calls
// of a test took seconds under -race.
func (f *fixture) boincWUs(name string) int {
	f.t.Helper()
	if f.bdb == nil {
		db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
		if err != nil {
			f.t.Fatal(err)
		}
		f.t.Cleanup(func() { db.Close() })
		f.bdb = db
	}
	var n int
	if err := f.bdb.QueryRow(`SELECT count(*) FROM workunit WHERE name = ?`, name).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// logBOINC logs the stand-in's work units and results, for a test that
// waited in vain (which step BOINC holds, and in what state).
func (f *fixture) logBOINC() {
	f.t.Helper()
	// BOINC's database as the engine reaches it (the stand-in's on MariaDB
	// too, where standin.db is not it).
	bdb, err := f.e.OpenBoincDB(f.ctx)
	if err != nil {
		f.t.Logf("BOINC's database: %v", err)
		return
	}
	defer bdb.Close()
	if st, err := engine.OpenState(f.ctx, f.root); err == nil {
		prefix := "" // the tables' names on MariaDB, where they sit beside BOINC's
		if os.Getenv("RBOINC_TEST_STATE_DB") == "mariadb" {
			prefix = "rboinc_"
		}
		logRows(f.t, "rboinc", st.SQL(), `SELECT chain_id, step, wu_name, state, attempts, not_before FROM `+prefix+`steps ORDER BY chain_id, step`)
		logRows(f.t, "rboinc", st.SQL(), `SELECT id, name, state, nsteps, error FROM `+prefix+`chains ORDER BY id`)
		st.Close()
	}
	logRows(f.t, "BOINC", bdb.DB, `SELECT name, error_mask, canonical_resultid, assimilate_state, file_delete_state, transition_time FROM workunit ORDER BY id`)
	logRows(f.t, "BOINC", bdb.DB, `SELECT name, server_state, outcome, client_state, validate_state FROM result ORDER BY id`)
}

// hookCall is a hook call as production makes it: spooled with its
// outputs (spool.Accept, the front half of rboinc-hook), then taken in by
// the creator's pass, which records it and creates the next step. While
// another creator holds the lock the call stays spooled for that one.
func hookCall(ctx context.Context, e *engine.Engine, call boinc.HookCall) error {
	if _, err := spool.Accept(e.Root, call); err != nil {
		return err
	}
	return e.CreatorPass(ctx)
}

// outputs fakes what BOINC leaves in the upload hierarchy for a WU.
func (f *fixture) outputs(wu string) []string {
	var paths []string
	for k, c := range []string{"4 5 6\n", "0.1 0.1 0.1\n", "log\n"} {
		p := f.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(c), 0o644)
		paths = append(paths, p)
	}
	return paths
}

func TestSubmitCreatesFirstStep(t *testing.T) {
	f := newFixture(t)
	resp := f.submit("g", "c1", 3)
	if len(resp.Chains) != 1 || f.boincWUs(resp.Chains[0].FirstWU) != 1 {
		t.Fatalf("submit: %+v", resp)
	}
	if _, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Chains: []wire.ChainSpec{{Name: "c1"}}}); engine.KindOf(err) != engine.KindBadRequest && engine.KindOf(err) != engine.KindNameTaken {
		t.Fatalf("resubmitting a taken name: %v", err)
	}
	f.submitErr(t, "nosuch", engine.KindUnknownQueue)
}

func (f *fixture) submitErr(t *testing.T, queue string, want engine.Kind) {
	t.Helper()
	up, refs := f.upload("a\n", "b\n")
	_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: queue, Group: "g", Upload: up,
		Chains: []wire.ChainSpec{{Name: "x", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if engine.KindOf(err) != want {
		t.Fatalf("queue %s: got %v (kind %d), want kind %d", queue, err, engine.KindOf(err), want)
	}
}

func TestHookTwiceCreatesOneStep(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 3).Chains[0].FirstWU
	paths := f.outputs(wu0)
	call, err := boinc.ParseHookArgs(append([]string{"17"}, paths...))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := hookCall(f.ctx, f.e, call); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	c, _, err := f.e.State().StepByWU(f.ctx, wu0)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := f.e.State().StepOf(f.ctx, c, 1)
	if err != nil || s1.State != "queued" {
		t.Fatalf("step 1: %+v %v", s1, err)
	}
	if n := f.boincWUs(s1.WU); n != 1 {
		t.Fatalf("%d work units named %s", n, s1.WU)
	}
	// Output 0 (coordinates) feeds input position 1, output 1 position 2.
	s0, _ := f.e.State().StepOf(f.ctx, c, 0)
	if s1.Inputs[0] != s0.Inputs[0] || s1.Inputs[1] != md5s("4 5 6\n") || s1.Inputs[2] != md5s("0.1 0.1 0.1\n") || s1.Inputs[3] != s0.Inputs[3] {
		t.Fatalf("chained inputs wrong:\nstep0 %v\nstep1 %v", s0.Inputs, s1.Inputs)
	}
	// The chained content is staged for BOINC under its content name.
	if _, _, ok := boinc.ReadSidecar(f.e.Proj.DownloadPath(pool.PhysicalName(s1.Inputs[1]))); !ok {
		t.Fatal("chained input not staged with a .md5 sidecar")
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "")
	if err != nil || st.Chains[0].StepsDone != 1 || st.Chains[0].State != wire.StateRunning {
		t.Fatalf("status %+v %v", st, err)
	}
	res, err := f.e.Results(f.ctx, f.u, "g", "")
	if err != nil || len(res.Files) != 3 || res.Files[0].Name != wu0+"_0" || res.Files[0].Aliases[0] != ".coor" {
		t.Fatalf("results %+v %v", res, err)
	}
}

func TestStoppedChainCreatesNothing(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 3).Chains[0].FirstWU
	if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "g"}); err != nil {
		t.Fatal(err)
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu0, Files: f.outputs(wu0)}); err != nil {
		t.Fatal(err)
	}
	c, _, _ := f.e.State().StepByWU(f.ctx, wu0)
	if s, err := f.e.State().StepOf(f.ctx, c, 1); err != nil || s.State != "held" || f.boincWUs(s.WU) != 0 {
		t.Fatalf("a stopped chain's next step: %+v, %v; want it held, not in BOINC", s, err)
	}
	st, _ := f.e.Status(f.ctx, f.u, "g", "c1")
	if st.Chains[0].State != wire.StateStopped || st.Chains[0].StepsDone != 1 {
		t.Fatalf("status %+v", st.Chains[0])
	}
}

// A step BOINC gave up on is made again, as a new work unit from the same
// inputs, until max_step_attempts; then the chain fails with the reason.
func TestFailedWorkUnitIsRetriedThenFailsChain(t *testing.T) {
	f := newFixture(t)
	f.e.Cfg.RetryBackoff = 0.001
	f.e.Cfg.MaxStepAttempts = 2
	wu0 := f.submit("g", "c1", 2).Chains[0].FirstWU
	if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: 8, WUName: wu0, WUID: 3}); err != nil {
		t.Fatal(err)
	}
	// A second call for the same work unit changes nothing.
	if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: 8, WUName: wu0, WUID: 3}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.e.Status(f.ctx, f.u, "g", "c1")
	if st.Chains[0].State != wire.StateRunning || !strings.Contains(st.Chains[0].Error, "attempt 1 of 2 failed") {
		t.Fatalf("after one failure: %+v", st.Chains[0])
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := f.e.CreatePending(f.ctx); err != nil {
		t.Fatal(err)
	}
	s, err := f.e.State().StepOf(f.ctx, store.Chain{ID: st2id(t, f, wu0)}, 0)
	if err != nil || s.WU == wu0 || f.boincWUs(s.WU) != 1 || s.State != "queued" {
		t.Fatalf("the retry: %+v, %v (in BOINC: %d)", s, err, f.boincWUs(s.WU))
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: 2, WUName: s.WU, WUID: 4}); err != nil {
		t.Fatal(err)
	}
	st, _ = f.e.Status(f.ctx, f.u, "g", "c1")
	if st.Chains[0].State != wire.StateFailed || !strings.Contains(st.Chains[0].Error, "error mask 2: too many error results") ||
		!strings.Contains(st.Chains[0].Error, "attempt 2 of 2") {
		t.Fatalf("after the last attempt: %+v", st.Chains[0])
	}
}

// st2id is the chain id of a work unit's chain, also of an earlier attempt.
func st2id(t *testing.T, f *fixture, wu string) int64 {
	var id int64
	if err := f.e.State().SQL().QueryRow(`SELECT chain_id FROM step_attempts WHERE wu_name = ? UNION SELECT chain_id FROM steps WHERE wu_name = ?`, wu, wu).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestLastStepEndsChainAndAckRemoves(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 1).Chains[0].FirstWU
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu0, Files: f.outputs(wu0)}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.e.Status(f.ctx, f.u, "g", "c1")
	if st.Chains[0].State != wire.StateDone {
		t.Fatalf("status %+v", st.Chains[0])
	}
	ack, err := f.e.Ack(f.ctx, f.u, wire.AckRequest{Group: "g", Files: []string{wu0 + "_0", wu0 + "_9"}})
	if err != nil || ack.Count != 1 {
		t.Fatalf("ack %+v %v", ack, err)
	}
	res, _ := f.e.Results(f.ctx, f.u, "g", "")
	if len(res.Files) != 2 {
		t.Fatalf("after ack: %+v", res.Files)
	}
	// Another user sees none of it.
	bob := store.User{ID: 999, Name: "bob"}
	if _, err := f.e.Results(f.ctx, bob, "g", ""); engine.KindOf(err) != engine.KindNotFound {
		t.Fatalf("bob reads alice's group: %v", err)
	}
}

func md5s(s string) string {
	p := filepath.Join(os.TempDir(), "md5s-"+fmt.Sprint(os.Getpid()))
	os.WriteFile(p, []byte(s), 0o644)
	defer os.Remove(p)
	sum, _, _ := md5sum.File(p)
	return sum
}

// countCreateWork wraps the project's bin/create_work so that every run is
// logged; it returns a function reading the number of runs.
func (f *fixture) countCreateWork() func() int {
	bin := filepath.Join(f.e.Proj.Dir, "bin")
	orig := filepath.Join(bin, "create_work.orig")
	if err := os.Rename(filepath.Join(bin, "create_work"), orig); err != nil {
		f.t.Fatal(err)
	}
	log := filepath.Join(f.t.TempDir(), "runs")
	script := "#!/bin/sh\necho run >> '" + log + "'\nexec '" + orig + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "create_work"), []byte(script), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return func() int {
		b, _ := os.ReadFile(log)
		return len(b) / len("run\n")
	}
}

func TestManyChainsOneCreateWork(t *testing.T) {
	f := newFixture(t)
	runs := f.countCreateWork()
	up, refs := f.upload("1 2 3\n", "0 0 0\n", "4 5 6\n")
	var chains []wire.ChainSpec
	for i := 0; i < 50; i++ {
		chains = append(chains, wire.ChainSpec{Name: fmt.Sprintf("c%d", i), Files: map[string]wire.FileRef{"coor_file": refs[i%2*2], "vel_file": refs[1]}})
	}
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up, Options: wire.Options{NumSteps: 4}, Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Chains) != 50 || runs() != 1 {
		t.Fatalf("%d chains with %d create_work runs", len(resp.Chains), runs())
	}
	for _, c := range resp.Chains {
		if f.boincWUs(c.FirstWU) != 1 {
			t.Fatalf("no work unit %s", c.FirstWU)
		}
	}
	// Three uploaded contents, the licence and the default run parameters:
	// each pooled once.
	ents, _ := filepath.Glob(filepath.Join(f.root, "pool", "*", "*"))
	if len(ents) != 5 {
		t.Fatalf("pool holds %d contents: %v", len(ents), ents)
	}
}

func TestCreateWorkFailureLeavesNothing(t *testing.T) {
	f := newFixture(t)
	// An app the stand-in does not know: create_work refuses the batch.
	os.RemoveAll(filepath.Join(f.e.Proj.Dir, "apps", "langevin"))
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
		Chains: []wire.ChainSpec{{Name: "c1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	// The administrator's to fix: the queue named, create_work's own
	// words kept for the log.
	if engine.KindOf(err) != engine.KindMisconfigured || !strings.Contains(err.Error(), `queue "langevin" is misconfigured`) ||
		!strings.Contains(errors.Unwrap(err).Error(), "app not found") {
		t.Fatalf("got %v", err)
	}
	if chains, _ := f.e.State().Chains(f.ctx, f.u.ID, "g", ""); len(chains) != 0 {
		t.Fatalf("a failed submission left chains: %+v", chains)
	}
}

func TestConcurrentSameNameOneWins(t *testing.T) {
	f := newFixture(t)
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	_ = up
	req := wire.SubmitRequest{Queue: "langevin", Group: "g", Chains: []wire.ChainSpec{{Name: "same", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}
	// Put the contents into the pool first, so both requests need no upload.
	req.Upload = up
	req.Chains[0].Name = "first"
	if _, err := f.e.Submit(f.ctx, f.u, req); err != nil {
		t.Fatal(err)
	}
	req.Upload = ""
	req.Chains[0].Name = "same"
	errs := make(chan error, 4)
	// Identical submissions (retries): one makes the chain, all succeed.
	made := make(chan bool, 4)
	for i := 0; i < 4; i++ {
		go func() {
			r, err := f.e.Submit(f.ctx, f.u, req)
			errs <- err
			made <- err == nil && !r.AlreadySubmitted
		}()
	}
	ok := 0
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Errorf("unexpected error: %v", err)
		}
		if <-made {
			ok++
		}
	}
	if cs, _ := f.e.State().Chains(f.ctx, f.u.ID, "g", "same"); ok != 1 || len(cs) != 1 || f.boincWUs(cs[0].WU(0)) != 1 {
		t.Fatalf("%d submissions of one chain made it (%d chains), want 1", ok, len(cs))
	}
	// Different chains under one name: exactly one wins.
	for i := 0; i < 4; i++ {
		r := req
		r.Chains = []wire.ChainSpec{{Name: "other", Files: req.Chains[0].Files}}
		r.Options.NumSteps = i + 2
		go func() { _, err := f.e.Submit(f.ctx, f.u, r); errs <- err }()
	}
	ok = 0
	for i := 0; i < 4; i++ {
		if err := <-errs; err == nil {
			ok++
		} else if engine.KindOf(err) != engine.KindNameTaken {
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d different submissions of one name succeeded", ok)
	}
}

func TestEncoder(t *testing.T) {
	f := newFixture(t)
	enc := filepath.Join(t.TempDir(), "enc")
	os.WriteFile(enc, []byte("#!/bin/sh\n{ echo \"encoded $3\"; cat \"$1\"; } > \"$2\"\n"), 0o755)
	f.e.Cfg.Encoder, f.e.Cfg.EncodeCode = enc, "-1"
	// A queue whose second input is encoded.
	tdir := filepath.Join(f.e.Proj.Dir, "templates")
	wu, _ := os.ReadFile(filepath.Join(tdir, "rboinc_langevin_wu"))
	wu = []byte(strings.Replace(string(wu), `parameter_name="vel_file"`, `encode="true" parameter_name="vel_file"`, 1))
	os.WriteFile(filepath.Join(tdir, "rboinc_enc_wu"), wu, 0o644)
	res, _ := os.ReadFile(filepath.Join(tdir, "rboinc_langevin_result"))
	os.WriteFile(filepath.Join(tdir, "rboinc_enc_result"), res, 0o644)
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "enc", Group: "g", Upload: up,
		Chains: []wire.ChainSpec{{Name: "c1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, s, _ := f.e.State().StepByWU(f.ctx, resp.Chains[0].FirstWU)
	if s.Inputs[2] != md5s("encoded -1\n0 0 0\n") {
		t.Fatalf("input 2 is %s, not the encoded content", s.Inputs[2])
	}
	f.e.Cfg.Encoder = "/nonexistent/encoder"
	up, refs = f.upload("7\n", "8\n")
	_, err = f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "enc", Group: "g", Upload: up,
		Chains: []wire.ChainSpec{{Name: "c2", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if err == nil || !strings.Contains(err.Error(), "encoder") {
		t.Fatalf("broken encoder: %v", err)
	}
}

func TestCollectKeepsWhatIsUsed(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 1).Chains[0].FirstWU
	_, s0, _ := f.e.State().StepByWU(f.ctx, wu0)
	coor := s0.Inputs[1]
	link := f.e.Proj.DownloadPath(pool.PhysicalName(coor))
	if n, err := f.e.Collect(f.ctx, 0); err != nil || n != 0 {
		t.Fatalf("collected %d (%v) while the chain runs", n, err)
	}
	if _, err := os.Stat(link); err != nil {
		t.Fatal("download link of a running step removed")
	}
	if err := hookCall(f.ctx, f.e, boinc.HookCall{WUName: wu0, Files: f.outputs(wu0)}); err != nil {
		t.Fatal(err)
	}
	// Done but not purged: the chain's inputs stay pooled; links may go.
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	if !f.e.Pool.Has(coor) {
		t.Fatal("input of a live chain collected")
	}
	if _, err := os.Stat(link); err == nil {
		t.Fatal("download link kept after the last step")
	}
	if _, err := f.e.Purge(f.ctx, f.u, wire.ChainRef{Group: "g"}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.e.Collect(f.ctx, -time.Hour); err != nil || n == 0 || f.e.Pool.Has(coor) {
		t.Fatalf("after purge: collected %d (%v), still has input: %v", n, err, f.e.Pool.Has(coor))
	}
}

// TestCollectSweepsCrashTemporaries: temporary files that an interrupted
// operation left beside the pool, the results and the download links go
// once they are an hour old; fresh ones (an operation in progress) and
// everything else stay.
func TestCollectSweepsCrashTemporaries(t *testing.T) {
	f := newFixture(t)
	wu0 := f.submit("g", "c1", 1).Chains[0].FirstWU
	_, s0, _ := f.e.State().StepByWU(f.ctx, wu0)
	link := f.e.Proj.DownloadPath(pool.PhysicalName(s0.Inputs[1]))
	results := filepath.Join(f.e.Root, "results", "ALICE_g")
	os.MkdirAll(results, 0o755)
	old := time.Now().Add(-2 * time.Hour)
	stale := []string{
		filepath.Join(results, "."+wu0+"_0.0123456789ab.ln"),
		filepath.Join(filepath.Dir(link), "."+filepath.Base(link)+".0123456789ab.ln"),
		filepath.Join(f.e.Pool.Dir, ".in12345"),
	}
	kept := []string{filepath.Join(filepath.Dir(link), ".boinc_own_file.ln")}
	for _, p := range append(stale, kept...) {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	fresh := filepath.Join(results, ".fresh.0123456789ab.ln")
	os.WriteFile(fresh, nil, 0o644)
	if _, err := f.e.Collect(f.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("stale temporary %s kept", p)
		}
	}
	for _, p := range append(kept, fresh, link) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

// create_work starts before a submission's contents are taken: a submission
// refused after that (a content neither on the server nor uploaded) leaves
// no work unit and no create_work behind.
func TestRefusedSubmissionEndsItsCreateWork(t *testing.T) {
	f := newFixture(t)
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	missing := wire.FileRef{MD5: md5s("nowhere\n"), Size: 8}
	_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
		Chains: []wire.ChainSpec{{Name: "x", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": missing}}}})
	if engine.KindOf(err) != engine.KindMissingContent {
		t.Fatalf("got %v (kind %d), want the missing content refused", err, engine.KindOf(err))
	}
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM workunit`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d work units after a refused submission (%v)", n, err)
	}
	if kids := childrenNamed(t, "create_work"); len(kids) > 0 {
		t.Fatalf("create_work still running after a refused submission: %v", kids)
	}
}

// childrenNamed lists this process's children whose command line holds s.
func childrenNamed(t *testing.T, s string) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the comm may hold spaces.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err != nil || ppid != os.Getpid() {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		if strings.Contains(string(cmd), s) {
			out = append(out, strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// logRows logs every row of query q on db, each with the columns' names.
func logRows(t *testing.T, what string, db *sql.DB, q string) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Logf("%s: %v", q, err)
		return
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err == nil {
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					vals[i] = string(b)
				}
			}
			t.Logf("%s %v = %v", what, cols, vals)
		}
	}
}
