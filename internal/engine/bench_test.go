package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boinctest"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
	"github.com/rboinc/rboinc/workflow/wire"
)

// The benchmarks run the engine in-process on a server root with the
// embedded BOINC stand-in (its create_work is the real separate process).
// bench/run.sh measures the same paths end to end, next to baselines.

// benchSize picks the full size, or a small one under -short (CI smoke).
func benchSize(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

type benchEnv struct {
	tb  testing.TB
	ctx context.Context
	e   *engine.Engine
	u   store.User
	n   int // contents written so far, to keep them distinct
}

func newBenchEnv(tb testing.TB) *benchEnv {
	tb.Helper()
	return newBenchEnvOn(tb, testStateDB(tb))
}

// newBenchEnvOn is newBenchEnv with the state at stateDB ("": SQLite).
func newBenchEnvOn(tb testing.TB, stateDB string) *benchEnv {
	tb.Helper()
	ctx := context.Background()
	root := tb.TempDir()
	testbin.Preinstall(root, serverExe)
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: stateDB, Create: os.Getenv("RBOINC_TEST_CREATE")}); err != nil {
		tb.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	id, err := e.State().AddUser(ctx, "bench", "hash-bench")
	if err != nil {
		tb.Fatal(err)
	}
	return &benchEnv{tb: tb, ctx: ctx, e: e, u: store.User{ID: id, Name: "bench"}}
}

// request builds a submission of n chains that share the velocities and
// each have their own coordinates, with the contents in a fresh upload.
func (b *benchEnv) request(group string, n, steps int) wire.SubmitRequest {
	b.tb.Helper()
	up, err := b.e.NewUpload(b.ctx, b.u)
	if err != nil {
		b.tb.Fatal(err)
	}
	dir := filepath.Join(b.e.DAVRoot(b.u), up.ID)
	put := func(content string) wire.FileRef {
		p := filepath.Join(dir, "tmp")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.tb.Fatal(err)
		}
		sum, size, err := md5sum.File(p)
		if err != nil {
			b.tb.Fatal(err)
		}
		if err := os.Rename(p, filepath.Join(dir, sum)); err != nil {
			b.tb.Fatal(err)
		}
		return wire.FileRef{MD5: sum, Size: size}
	}
	vel := put("0 0 0\n")
	req := wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up.ID, Options: wire.Options{NumSteps: steps}}
	for i := 0; i < n; i++ {
		b.n++
		coor := put(fmt.Sprintf("%d 1 2\n", b.n))
		req.Chains = append(req.Chains, wire.ChainSpec{Name: fmt.Sprintf("c%d", i), Files: map[string]wire.FileRef{"coor_file": coor, "vel_file": vel}})
	}
	return req
}

func (b *benchEnv) submit(req wire.SubmitRequest) wire.SubmitResponse {
	b.tb.Helper()
	resp, err := b.e.Submit(b.ctx, b.u, req)
	if err != nil {
		b.tb.Fatal(err)
	}
	return resp
}

// outputs puts the three outputs of a langevin work unit into BOINC's
// upload hierarchy, as a volunteer's upload would.
func (b *benchEnv) outputs(wu string) []string {
	var paths []string
	for k := 0; k < 3; k++ {
		p := b.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("output %d of %s\n", k, wu)), 0o644); err != nil {
			b.tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func perSecond(b *testing.B, n int, d time.Duration, unit string) {
	if d > 0 {
		b.ReportMetric(float64(n)/d.Seconds(), unit)
	}
}

// BenchmarkSubmit: one request of many chains sharing most inputs, uploads
// taken into the pool, one create_work run (target: >= 500 chains/s).
func BenchmarkSubmit(b *testing.B) {
	n := benchSize(2000, 20)
	env := newBenchEnv(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		req := env.request(fmt.Sprintf("g%d", i), n, 3)
		b.StartTimer()
		t0 := time.Now()
		env.submit(req)
		total += time.Since(t0)
	}
	perSecond(b, n*b.N, total, "chains/s")
}

// BenchmarkAdvance: a lone hook call in-process with no creator running,
// per chain: spool the outputs (hard link, sync; spool.Accept), then the
// creator's pass this process does itself (hash, record, create the next
// step with a create_work run of its own). With a creator running, the
// runs are shared: bench/run.sh measures that (target: >= 200 chains/s,
// see BENCHMARKS.md).
func BenchmarkAdvance(b *testing.B) {
	env := newBenchEnv(b)
	resp := env.submit(env.request("g", b.N, 3))
	calls := make([]boinc.HookCall, b.N)
	for i, c := range resp.Chains {
		calls[i] = boinc.HookCall{WUName: c.FirstWU, WUID: int64(i + 1), Files: env.outputs(c.FirstWU)}
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if err := hookCall(env.ctx, env.e, calls[i]); err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, b.N, time.Since(t0), "chains/s")
}

// BenchmarkCreatorPass: the creator's side of the spool, per chain: take a
// spooled call in (hash its outputs, record the step and the next one) and
// create the next steps' work units, all calls of a pass together (one
// create_work run, one sync). The hooks' side is rboinc-hook's spool.Write.
func BenchmarkCreatorPass(b *testing.B) {
	n := benchSize(300, 20) // calls waiting in the spool at each pass
	env := newBenchEnv(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		resp := env.submit(env.request(fmt.Sprintf("g%d", i), n, 3))
		for k, c := range resp.Chains {
			if _, err := spool.Write(env.e.Root, boinc.HookCall{WUName: c.FirstWU, WUID: int64(k + 1), Files: env.outputs(c.FirstWU)}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		if got, err := advance.IntakeSpool(env.ctx, env.e.Chains()); err != nil || got != n {
			b.Fatalf("took %d calls in, %v", got, err)
		}
		if got, err := env.e.CreatePending(env.ctx); err != nil || got != n {
			b.Fatalf("created %d next steps, %v", got, err)
		}
		total += time.Since(t0)
	}
	perSecond(b, b.N*n, total, "chains/s")
}

// BenchmarkAdvanceLastStep: the hook for a chain's last step: ingest only,
// no create_work.
func BenchmarkAdvanceLastStep(b *testing.B) {
	env := newBenchEnv(b)
	resp := env.submit(env.request("g", b.N, 1))
	calls := make([]boinc.HookCall, b.N)
	for i, c := range resp.Chains {
		calls[i] = boinc.HookCall{WUName: c.FirstWU, WUID: int64(i + 1), Files: env.outputs(c.FirstWU)}
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if err := hookCall(env.ctx, env.e, calls[i]); err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, b.N, time.Since(t0), "chains/s")
}

// BenchmarkOpen: what every hook process pays before its work.
func BenchmarkOpen(b *testing.B) {
	env := newBenchEnv(b)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, err := engine.Open(env.ctx, env.e.Root, log)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkStatus: the status of one group of many chains (target: 10,000
// chains in < 0.5 s).
func BenchmarkStatus(b *testing.B) {
	n := benchSize(10000, 30)
	env := newBenchEnv(b)
	env.submit(env.request("g", n, 1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := env.e.Status(env.ctx, env.u, "g", "")
		if err != nil || len(st.Chains) != n {
			b.Fatalf("status: %d chains, %v", len(st.Chains), err)
		}
	}
	b.ReportMetric(float64(n), "chains")
}

// BenchmarkResults: listing many result files waiting for retrieval
// (10,000 in the full run).
func BenchmarkResults(b *testing.B) {
	chains := benchSize(3334, 30)
	env := newBenchEnv(b)
	resp := env.submit(env.request("g", chains, 1))
	for _, c := range resp.Chains {
		ch, s, err := env.e.State().StepByWU(env.ctx, c.FirstWU)
		if err != nil {
			b.Fatal(err)
		}
		var rs []store.Result
		for k := 0; k < 3; k++ {
			rs = append(rs, store.Result{ChainID: ch.ID, Step: s.Step, Index: k, File: fmt.Sprintf("%s_%d", c.FirstWU, k),
				MD5: "0123456789abcdef0123456789abcdef", Size: 100000})
		}
		if _, _, _, err := env.e.State().CompleteStep(env.ctx, ch, s.Step, rs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := env.e.Results(env.ctx, env.u, "g", "")
		if err != nil || len(r.Files) != 3*chains {
			b.Fatalf("results: %d files, %v", len(r.Files), err)
		}
	}
	b.ReportMetric(float64(3*chains), "files")
}

// BenchmarkNativeAssimilator: one pass of the native assimilator over n
// work units BOINC finished, next steps created (target: >= 1,000
// chains/s, see BENCHMARKS.md).
func BenchmarkNativeAssimilator(b *testing.B) {
	n := benchSize(1000, 50)
	env := newBenchEnv(b)
	var total time.Duration
	done := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env.submit(env.request(fmt.Sprintf("g%d", i), n, 2))
		made := boincDone(b, env.e, nil) // this round's first steps and the last round's next ones
		a := newAssimilator(b, env.e)
		a.Batch = 500
		if os.Getenv("RBOINC_BENCH_DEBUG") != "" {
			a.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		b.StartTimer()
		t0 := time.Now()
		got, err := a.Pass(env.ctx)
		if err != nil || got != made {
			b.Fatalf("assimilated %d of %d: %v", got, made, err)
		}
		total += time.Since(t0)
		done += got
	}
	perSecond(b, done, total, "chains/s")
}

// BenchmarkNativeAssimilatorProcess: BenchmarkNativeAssimilator through
// the daemon program itself (`rboinc-server assimilator --one_pass`).
func BenchmarkNativeAssimilatorProcess(b *testing.B) {
	n := benchSize(1000, 50)
	env := newBenchEnv(b)
	var total time.Duration
	done := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env.submit(env.request(fmt.Sprintf("g%d", i), n, 2))
		made := boincDone(b, env.e, nil)
		b.StartTimer()
		t0 := time.Now()
		cmd := exec.Command(serverExe, "assimilator", "--root", env.e.Root, "--one_pass", "-d", "3")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		total += time.Since(t0)
		done += made
		if os.Getenv("RBOINC_BENCH_DEBUG") != "" {
			os.Stderr.Write(out)
		}
	}
	perSecond(b, done, total, "chains/s")
}

// BenchmarkRetryStorm: every work unit of n chains fails in BOINC at once;
// the native assimilator's pass records the failures and schedules each
// step again, and the creator makes the retries (one create_work run).
// The baseline, measured in the same iteration on as many chains, is the
// same two passes after BOINC finished the work units well (target: >= 500
// retries/s).
func BenchmarkRetryStorm(b *testing.B) {
	n := benchSize(10000, 30)
	env := newBenchEnv(b)
	env.e.Cfg.RetryBackoff = 0.001 // the retries are due at once
	var failT, okT time.Duration
	retried, advanced := 0, 0
	pass := func(group string, fail bool) time.Duration {
		env.submit(env.request(group, n, 2))
		bdb, err := env.e.OpenBoincDB(env.ctx)
		if err != nil {
			b.Fatal(err)
		}
		made, err := boinctest.Finish(env.ctx, bdb, env.e.Proj, func(string) bool { return fail },
			func(wu string) bool { return strings.Contains(wu, "_"+group+"-") })
		bdb.Close()
		if err != nil || made != n {
			b.Fatalf("BOINC finished %d work units, want %d", made, n)
		}
		a := newAssimilator(b, env.e)
		a.Batch = 500
		time.Sleep(5 * time.Millisecond)
		b.StartTimer()
		t0 := time.Now()
		got, err := a.Pass(env.ctx)
		if err != nil || got != n {
			b.Fatalf("assimilated %d of %d: %v", got, n, err)
		}
		// The pass has the creator make what it scheduled; what is left
		// (a retry whose back-off had not passed) is made now.
		time.Sleep(2 * time.Millisecond)
		for {
			k, err := env.e.CreatePending(env.ctx)
			if err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				break
			}
		}
		d := time.Since(t0)
		attempts := 1
		if fail {
			attempts = 2
		}
		var queued int
		if err := env.e.State().SQL().QueryRow(`SELECT count(*) FROM steps s JOIN chains c ON c.id = s.chain_id
			WHERE c.grp = ? AND s.state = 'queued' AND s.attempts = ?`, group, attempts).Scan(&queued); err != nil || queued != n {
			b.Fatalf("%d of %d next work units made (attempt %d): %v", queued, n, attempts, err)
		}
		b.StopTimer()
		return d
	}
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		failT += pass(fmt.Sprintf("f%d", i), true)
		retried += n
		okT += pass(fmt.Sprintf("s%d", i), false)
		advanced += n
	}
	perSecond(b, retried, failT, "retries/s")
	perSecond(b, advanced, okT, "advances/s")
	if failT > 0 && okT > 0 {
		b.ReportMetric((float64(retried)/failT.Seconds())/(float64(advanced)/okT.Seconds()), "retry/advance")
	}
}

// BenchmarkStateEngines: submission and chain advances with the state on
// SQLite and on MariaDB, side by side in one run (BENCHMARKS.md gives the
// ratio). Each op is a submission of n chains, or the advance (hook
// in-process, no creator) of n chains submitted before it untimed.
func BenchmarkStateEngines(b *testing.B) {
	n := benchSize(1000, 10)  // chains per submission
	nAdv := benchSize(300, 5) // chains advanced per op
	for _, en := range []struct {
		name  string
		state func(testing.TB) string
	}{
		{"sqlite", func(testing.TB) string { return "" }},
		{"mariadb", func(tb testing.TB) string { mariadbtest.Shared(tb); return "mysql://" + mariadbtest.NewDB(tb) }},
	} {
		b.Run("submit/"+en.name, func(b *testing.B) {
			env := newBenchEnvOn(b, en.state(b))
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				req := env.request(fmt.Sprintf("g%d", i), n, 3)
				b.StartTimer()
				t0 := time.Now()
				env.submit(req)
				total += time.Since(t0)
			}
			perSecond(b, n*b.N, total, "chains/s")
		})
		b.Run("advance/"+en.name, func(b *testing.B) {
			env := newBenchEnvOn(b, en.state(b))
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				resp := env.submit(env.request(fmt.Sprintf("g%d", i), nAdv, 3))
				calls := make([]boinc.HookCall, len(resp.Chains))
				for j, c := range resp.Chains {
					calls[j] = boinc.HookCall{WUName: c.FirstWU, WUID: int64(i*nAdv + j + 1), Files: env.outputs(c.FirstWU)}
				}
				b.StartTimer()
				t0 := time.Now()
				for _, call := range calls {
					if err := hookCall(env.ctx, env.e, call); err != nil {
						b.Fatal(err)
					}
				}
				total += time.Since(t0)
			}
			perSecond(b, nAdv*b.N, total, "chains/s")
		})
	}
}

// BenchmarkInputCheck: one pass of the creator's input check over the work
// units of 5000 waiting chains (5001 distinct inputs, all in place): the
// state store's list, BOINC's database in batches of 500, a stat per file.
func BenchmarkInputCheck(b *testing.B) {
	n := benchSize(5000, 50)
	env := newBenchEnv(b)
	env.submit(env.request("g", n, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := env.e.CheckInputs(env.ctx, true)
		if err != nil || r.WorkUnits != n || len(r.Relinked) != 0 {
			b.Fatalf("%+v %v", r.WorkUnits, err)
		}
	}
	b.ReportMetric(float64(n), "work_units/op")
}
