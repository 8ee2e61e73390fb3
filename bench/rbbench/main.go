// Command rbbench measures rboinc against baselines measured in the same
// run, for BENCHMARKS.md: it starts a real `rboinc-server serve` on the
// embedded BOINC stand-in, drives the real clients, and times md5sum, cp,
// the stand-in's create_work --stdin and a plain HTTP file server with curl
// on the same bytes. bench/run.sh builds the binaries and runs it.
//
// Usage: rbbench -bin DIR -work DIR [-short]
//
// It never asserts a timing: it exits non-zero only when something does
// not work (a command fails, a count is wrong).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
)

// sizes of one run.
type sizes struct {
	Big        int64 // the large file: hashing, 1 GB upload and retrieval
	Submit     int   // chains in one submission
	Hook       int   // sequential hook processes
	HookPar    int   // hook processes, two at a time
	HookInproc int   // in-process engine.Hook calls
	RetrFiles  int   // result files to retrieve
	RetrSize   int64 // bytes of each
	Status     int   // chains in the status group
	Total      int   // work units the server holds at the end
	Batch      int   // chains per submission while filling up to Total
	Native     int   // work units one native assimilator pass takes
	NativeMem  int   // ... and many more, for its memory
}

var fullSizes = sizes{Big: 1 << 30, Submit: 2000, Hook: 200, HookPar: 200, HookInproc: 200,
	RetrFiles: 10000, RetrSize: 100000, Status: 10000, Total: 150000, Batch: 10000, Native: 2000, NativeMem: 100000}

// shortSizes are CI's smoke run: each stage's code runs once with its
// checks (none of them on timing), at sizes that prove it works rather
// than how fast (about a third of the previous short run's; the native
// assimilator's memory still over 10x the work units).
var shortSizes = sizes{Big: 4 << 20, Submit: 30, Hook: 4, HookPar: 4, HookInproc: 6,
	RetrFiles: 30, RetrSize: 100000, Status: 100, Total: 400, Batch: 100, Native: 30, NativeMem: 300}

type bench struct {
	ctx   context.Context
	bin   string
	work  string
	data  string
	short bool
	sz    sizes
	// create is the server's way of creating work units ("" or
	// "create_work": BOINC's create_work; "native": rboinc's inserts).
	create string
	only   map[string]bool // stages to run; empty: all
	srv    *rbServer
	eng    *engine.Engine
	// state is the server's state database, opened beside the engine for
	// the stages that look at steps directly.
	state *store.DB
	rows  []row
	notes []string
	// figures shared between stages
	nativeSmall nativeFigures // stageNative's run, the baseline of stageNativeMem
	md5sumRate  float64       // bytes/s, fastest md5sum
	cpTime      time.Duration
	md5Time     time.Duration
	cwAlone     time.Duration // create_work --stdin alone for the submission's work units
	bigWU       string        // the large upload's work unit, whose output is retrieved
	s1kWUs      []string      // first work units of the 1,000-chain submission, for the hook
	cwSeen      int           // creator passes already counted in the server's log
	hookRate    float64       // chains/s through the hook, one process per call
}

func main() {
	bin := flag.String("bin", "", "directory holding rboinc-server, rboinc-submit and rboinc-retrieve")
	work := flag.String("work", "", "working directory (created; large files go here)")
	short := flag.Bool("short", false, "small sizes: a smoke run that finishes in well under a minute")
	create := flag.String("create", "", `how the server creates work units: "create_work" (default) or "native" (rboinc.json "create")`)
	only := flag.String("stages", "", "comma-separated stages to run (default all): "+strings.Join(stageNames, ","))
	flag.Parse()
	if *bin == "" || *work == "" {
		fmt.Fprintln(os.Stderr, "usage: rbbench -bin DIR -work DIR [-short]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &bench{ctx: ctx, bin: abs(*bin), work: abs(*work), short: *short, sz: fullSizes, only: map[string]bool{}, create: *create}
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(stageNames, s) {
			fmt.Fprintf(os.Stderr, "rbbench: no stage %q (stages: %s)\n", s, strings.Join(stageNames, ","))
			os.Exit(2)
		}
		b.only[s] = true
		for _, d := range stageNeeds[s] {
			b.only[d] = true
		}
	}
	if *short {
		b.sz = shortSizes
	}
	if err := b.run(); err != nil {
		fmt.Fprintln(os.Stderr, "rbbench:", err)
		os.Exit(1)
	}
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func (b *bench) run() error {
	b.data = filepath.Join(b.work, "data")
	if err := os.MkdirAll(b.data, 0o755); err != nil {
		return err
	}
	mode := "full"
	if b.short {
		mode = "short (smoke)"
	}
	fmt.Printf("rbbench: %s run, %d CPUs, %s, load average at start %s\n", mode, runtime.NumCPU(), runtime.Version(), loadAvg())
	b.notes = append(b.notes, fmt.Sprintf("%s run; %d CPUs; %s; load average at start: %s", mode, runtime.NumCPU(), runtime.Version(), loadAvg()))
	if n := journalNote(b.work); n != "" {
		b.note("%s", n)
	}
	t0 := time.Now()
	b.notes = append(b.notes, fmt.Sprintf("work units created by: %s", b.createMode()))
	srv, err := startServer(b.ctx, b.bin, b.work, b.create)
	if err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	b.srv = srv
	defer srv.stop()
	eng, err := engine.Open(b.ctx, srv.root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	b.eng = eng
	defer eng.Close()
	if b.state, err = engine.OpenState(b.ctx, srv.root); err != nil {
		return err
	}
	defer b.state.Close()
	if err := b.writeSmallInputs(); err != nil {
		return err
	}
	stages := map[string]func() error{
		"hash": b.stageHash, "upload": b.stageUploadBig, "retrieve-big": b.stageRetrieveBig,
		"submit": b.stageSubmit, "resubmit": b.stageResubmit, "hook": b.stageHook, "native": b.stageNative,
		"native-mem": b.stageNativeMem,
		"retrieve":   b.stageRetrieve, "status": b.stageStatus, "scale": b.stageScale,
	}
	for _, name := range stageNames {
		if len(b.only) > 0 && !b.only[name] {
			continue
		}
		if b.ctx.Err() != nil {
			return b.ctx.Err()
		}
		s := struct {
			name string
			fn   func() error
		}{name, stages[name]}
		fmt.Printf("== %s\n", s.name)
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if errs := countErrors(filepath.Join(b.work, "server.log")); errs > 0 {
		b.notes = append(b.notes, fmt.Sprintf("the server logged %d error line(s): see %s", errs, filepath.Join(b.work, "server.log")))
	}
	b.notes = append(b.notes, fmt.Sprintf("load average at the end: %s; whole run %.0f s", loadAvg(), time.Since(t0).Seconds()))
	return b.writeReport()
}

// stageNames in the order they run; stageNeeds are the earlier stages a
// stage builds on.
var (
	stageNames = []string{"hash", "upload", "retrieve-big", "submit", "resubmit", "hook", "native", "native-mem", "retrieve", "status", "scale"}
	stageNeeds = map[string][]string{"native-mem": {"native"}, "upload": {"hash"}, "retrieve-big": {"hash", "upload"}, "resubmit": {"submit"}, "hook": {"submit"}, "scale": {"status"}}
)

func countErrors(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "level=ERROR")
}

// createMode names how the server creates work units.
func (b *bench) createMode() string {
	if b.create == engine.CreateNative {
		return "native creation (rboinc.json \"create\": \"native\")"
	}
	return "create_work (rboinc.json \"create\": \"create_work\")"
}

// native tells whether the server creates work units natively.
func (b *bench) native() bool { return b.create == engine.CreateNative }
