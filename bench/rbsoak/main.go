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
	rootfs      string // the server root's file system: image, tmpfs or dir (rootfs.go)
	resume      bool   // go on with the run in work (resume.go)
	noJournal   bool
	killAfter   time.Duration // kill the whole run after this (to test -resume)
	dbPool      string        // MariaDB's buffer pool, "" for mariadbtest's
	chainsSet   bool          // -chains was given (a resumed run may grow by it)
	killDuring  string        // ... in the middle of a fault of this kind
	args        []string      // the command line, as journaled
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "rbsoak:", err)
		os.Exit(2)
	}
	var past []rec
	if o.resume {
		// The run's own options, from its journal; of this command line
		// only what is about this life of the driver.
		if past, err = readJournal(filepath.Join(o.work, journalFile)); err != nil {
			fmt.Fprintln(os.Stderr, "rbsoak: -resume:", err)
			os.Exit(1)
		}
		if o, err = resumedOptions(past, o); err != nil {
			fmt.Fprintln(os.Stderr, "rbsoak: -resume:", err)
			os.Exit(2)
		}
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
