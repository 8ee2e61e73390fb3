// Command rbsoak is the soak driver of issue 30: it runs a real
// `rboinc-server serve` on the embedded BOINC stand-in (the state and
// BOINC's database on SQLite, or with -mariadb both on a private MariaDB it
// starts), drives several users' submitters, cron-like retrievers, control
// and purges, a master program and HTCondor's GAHP (rboinc-gahp) against
// it all at once while the stand-in computes with a
// share of failing, flaky and slow results, and kills processes at random
// moments. At the end it checks that nothing was lost, made twice or left
// behind, and prints the figures (chains and steps per hour, faults
// survived by kind, bytes left, memory and descriptor curves).
//
// bench/soak.sh builds the binaries and runs it; bench/soak.sh --short is
// the stage of .ci/run. It exits 1 with a list of what failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// options of one soak run.
type options struct {
	bin, work   string
	chains      int           // chains to submit, all users together
	steps       int           // steps of an ordinary chain
	users       int           // submitting users
	batch       int           // chains per submission
	inFlight    int           // a user's groups submitted and not yet purged, at most
	duration    time.Duration // bound of the whole run; chains still running then fail it
	faultEvery  time.Duration // mean time between two faults
	minFaults   int           // each fault at least this often (submission pauses until then)
	sample      time.Duration // memory and descriptor sampling interval
	retrieveGap time.Duration // a retriever's pause between two runs (as cron would)
	mariadb     bool
	assimilator string // native or hook
	faults      string // comma-separated fault kinds, or "all"
	seed        int64
	tmpfsSize   string
	keep        bool
	oneStep     int    // when N > 1, every group but each Nth has chains of one step
	slots       int    // the stand-in's volunteer slots (rboinc_standin_slots); 0: its default
	stepEvents  int    // users whose webhook takes step events too; -1: every user
	app         string // the langevin queue's executable (apps/langevin/run); "": the shipped script
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "directory holding rboinc-server, rboinc-submit and rboinc-retrieve")
	flag.StringVar(&o.work, "work", "", "working directory (created)")
	short := flag.Bool("short", false, "the CI run: 2,100 chains in groups of 150 (six groups in seven of 1 step, the seventh of 2), every fault at least 5 times, in a few minutes")
	flag.IntVar(&o.chains, "chains", 10000, "chains to submit (all users together)")
	flag.IntVar(&o.steps, "steps", 100, "steps of an ordinary chain")
	flag.IntVar(&o.users, "users", 3, "submitting users")
	flag.IntVar(&o.batch, "batch", 250, "chains per submission")
	flag.IntVar(&o.inFlight, "in-flight", 2, "a user's groups submitted and not yet purged, at most (the next waits; -short: 4)")
	flag.DurationVar(&o.duration, "duration", 72*time.Hour, "bound of the whole run: chains still running then fail it")
	flag.DurationVar(&o.faultEvery, "fault-every", 30*time.Second, "mean time between two faults")
	flag.IntVar(&o.minFaults, "min-faults", 5, "each fault at least this many times")
	flag.DurationVar(&o.sample, "sample", time.Minute, "memory and descriptor sampling interval")
	flag.DurationVar(&o.retrieveGap, "retrieve-every", 30*time.Second, "a retriever's pause between two runs")
	flag.StringVar(&o.assimilator, "assimilator", "native", "how finished work units reach rboinc: native (rboinc's assimilator daemon) or hook (BOINC's script_assimilator, played by the stand-in, running rboinc-hook per work unit); the assimilator fault kills the one in use")
	flag.BoolVar(&o.mariadb, "mariadb", false, "rboinc's state and BOINC's database on a private MariaDB the driver starts (and kills)")
	flag.StringVar(&o.faults, "faults", "all", "fault kinds, comma-separated: "+strings.Join(allFaults, ",")+" (or all)")
	flag.Int64Var(&o.seed, "seed", 0, "random seed (0: from the clock)")
	flag.StringVar(&o.tmpfsSize, "tmpfs-size", "2g", "size of the tmpfs the server root is mounted on (for the disk-full fault)")
	flag.IntVar(&o.oneStep, "one-step", 0, "N > 1: every group but each Nth has chains of one step (the short run, for time), each Nth -steps")
	flag.IntVar(&o.slots, "slots", 16, "results the stand-in computes at once (config.xml's rboinc_standin_slots: a project's many hosts); 0: the stand-in's default 4 (-short: 0)")
	flag.IntVar(&o.stepEvents, "step-events", 1, "users whose webhook takes step events (step_created, step_done, step_retried) besides chain and group events; -1: every user (-short: -1)")
	flag.StringVar(&o.app, "app", "", "executable the stand-in runs as the langevin app (bench/soak.sh builds bench/langevin/langevin.c: one exec a result, where the shipped script is sh and awk); empty: the shipped examples/langevin/run")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory's server root at the end")
	flag.Parse()
	if o.bin == "" || o.work == "" {
		fmt.Fprintln(os.Stderr, "usage: rbsoak -bin DIR -work DIR [-short] [-mariadb] [-chains N] [-steps N] [-duration D]")
		os.Exit(2)
	}
	if o.assimilator != "native" && o.assimilator != "hook" {
		fmt.Fprintf(os.Stderr, "rbsoak: -assimilator %q: native or hook\n", o.assimilator)
		os.Exit(2)
	}
	if *short {
		// Set only what the command line did not.
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		def := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		def("chains", func() { o.chains = 2100 })
		def("in-flight", func() { o.inFlight = 4 })
		def("steps", func() { o.steps = 2 })
		def("one-step", func() { o.oneStep = 7 })
		def("batch", func() { o.batch = 150 })
		def("duration", func() { o.duration = 8 * time.Minute })
		def("fault-every", func() { o.faultEvery = 2500 * time.Millisecond })
		def("sample", func() { o.sample = 3 * time.Second })
		def("retrieve-every", func() { o.retrieveGap = 3 * time.Second })
		def("tmpfs-size", func() { o.tmpfsSize = "1g" })
		def("slots", func() { o.slots = 0 })
		def("step-events", func() { o.stepEvents = -1 })
	}
	if o.seed == 0 {
		o.seed = time.Now().UnixNano()
	}
	o.bin, o.work = abs(o.bin), abs(o.work)
	if o.app != "" {
		o.app = abs(o.app)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := "the shipped script"
	if o.app != "" {
		app = o.app
	}
	fmt.Printf("rbsoak: %d chains of %d steps, %d users, %s, %s assimilator, app %s, seed %d, %d CPUs, load %s\n",
		o.chains, o.steps, o.users, map[bool]string{false: "SQLite", true: "MariaDB"}[o.mariadb], o.assimilator, app, o.seed, runtime.NumCPU(), loadAvg())
	s, err := newSoak(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rbsoak:", err)
		os.Exit(1)
	}
	problems, err := s.run()
	s.close()
	printCPU()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rbsoak:", err)
		os.Exit(1)
	}
	if len(problems) > 0 {
		fmt.Printf("\nrbsoak FAILED: %d problems\n", len(problems))
		for _, p := range problems {
			fmt.Println("  -", p)
		}
		os.Exit(1)
	}
	fmt.Println("\nrbsoak passed")
}

// printCPU prints the processor time the run took: the driver's and that
// of every process it started and reaped (the server, its daemons,
// MariaDB, the clients), a figure a loaded machine does not change much.
// Daemons orphaned by a killed server are reaped by the namespace's init,
// not counted here.
func printCPU() {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	sec := func(r syscall.Rusage) float64 {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano()).Seconds()
	}
	fmt.Printf("processor time: %.0f s (driver %.0f s, the processes it started %.0f s)\n", sec(self)+sec(kids), sec(self), sec(kids))
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// loadAvg is the load average, to show how busy the machine was.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
