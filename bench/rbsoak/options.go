package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// parseOptions reads rbsoak's command line. The options of a run are
// journaled as a command line (its own, with -bin, -work and -seed made
// absolute and fixed) that -resume reads again.
func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("rbsoak", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "", "directory holding rboinc-server, rboinc-submit and rboinc-retrieve")
	fs.StringVar(&o.work, "work", "", "working directory (created)")
	short := fs.Bool("short", false, "the CI run: 2,100 chains in groups of 150 (six groups in seven of 1 step, the seventh of 2), every fault at least 5 times, in a few minutes")
	fs.IntVar(&o.chains, "chains", 10000, "chains to submit (all users together); with -resume, another number: the run grows by the groups that many chains add, or drops planned groups it has not submitted (never one it has)")
	fs.IntVar(&o.steps, "steps", 100, "steps of an ordinary chain")
	fs.IntVar(&o.users, "users", 3, "submitting users")
	fs.IntVar(&o.batch, "batch", 250, "chains per submission")
	fs.IntVar(&o.inFlight, "in-flight", 2, "a user's groups submitted and not yet purged, at most (the next waits; -short: 4)")
	fs.DurationVar(&o.duration, "duration", 72*time.Hour, "bound of the run (of each life of the driver, in a run resumed after a kill of the whole run): chains still running then fail it")
	fs.DurationVar(&o.faultEvery, "fault-every", 30*time.Second, "mean time between two faults")
	fs.IntVar(&o.minFaults, "min-faults", 5, "each fault at least this many times")
	fs.DurationVar(&o.sample, "sample", time.Minute, "memory and descriptor sampling interval")
	fs.DurationVar(&o.retrieveGap, "retrieve-every", 30*time.Second, "a retriever's pause between two runs")
	fs.StringVar(&o.assimilator, "assimilator", "native", "how finished work units reach rboinc: native (rboinc's assimilator daemon) or hook (BOINC's script_assimilator, played by the stand-in, running rboinc-hook per work unit); the assimilator fault kills the one in use")
	fs.StringVar(&o.dbPool, "db-pool", "2G", "with -mariadb: MariaDB's buffer pool (--innodb-buffer-pool-size), of this life of the driver: a long run's databases grow to gigabytes, read from disk at every query with the test servers' 64M (-short: 64M)")
	fs.BoolVar(&o.mariadb, "mariadb", false, "rboinc's state and BOINC's database on a private MariaDB the driver starts (and kills)")
	fs.StringVar(&o.faults, "faults", "all", "fault kinds, comma-separated: "+strings.Join(allFaults, ",")+" (or all)")
	fs.Int64Var(&o.seed, "seed", 0, "random seed (0: from the clock)")
	fs.StringVar(&o.tmpfsSize, "tmpfs-size", "2g", "size of the file system the server root is on (a tmpfs or the ext4 image; for the disk-full fault)")
	fs.StringVar(&o.rootfs, "rootfs", rootImage, "the server root's file system: image (an ext4 image in the work directory, loop-mounted: outlives a stop of the machine, for -resume), tmpfs (gone with the run; -short), dir (a plain directory: no disk-full fault)")
	fs.IntVar(&o.oneStep, "one-step", 0, "N > 1: every group but each Nth has chains of one step (the short run, for time), each Nth -steps")
	fs.IntVar(&o.slots, "slots", 16, "results the stand-in computes at once (config.xml's rboinc_standin_slots: a project's many hosts); 0: the stand-in's default 4 (-short: 0)")
	fs.IntVar(&o.stepEvents, "step-events", 1, "users whose webhook takes step events (step_created, step_done, step_retried) besides chain and group events; -1: every user (-short: -1)")
	fs.StringVar(&o.app, "app", "", "executable the stand-in runs as the langevin app (bench/soak.sh builds bench/langevin/langevin.c: one exec a result, where the shipped script is sh and awk); empty: the shipped examples/langevin/run")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory's server root at the end")
	fs.BoolVar(&o.resume, "resume", false, "go on with the run in -work, whose every process was killed (the machine stopped): its options and ledger come from its journal")
	fs.BoolVar(&o.noJournal, "no-journal", false, "keep no journal (the run cannot be resumed; to measure the journal's cost)")
	fs.DurationVar(&o.killAfter, "kill-self-after", 0, "D > 0: after D (of this life of the driver), kill -9 every process of the run and the driver itself, as a stop of the machine would (to test -resume)")
	fs.StringVar(&o.killDuring, "kill-self-during", "", "with -kill-self-after: kill in the middle of the first fault of this kind after D (diskfull, mariadb, server, ...), or at the first such point of the driver's work (gahp-retire: a GAHP batch's retirement journaled, not yet answered)")
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(nil)
		fs.PrintDefaults()
		return o, err
	}
	if err != nil {
		return o, err
	}
	if o.work == "" || o.bin == "" && !o.resume {
		return o, errors.New("usage: rbsoak -bin DIR -work DIR [-short] [-mariadb] [-chains N] [-steps N] [-duration D], or rbsoak -resume -work DIR")
	}
	if o.assimilator != "native" && o.assimilator != "hook" {
		return o, fmt.Errorf("-assimilator %q: native or hook", o.assimilator)
	}
	if o.killDuring != "" && !contains(allFaults, o.killDuring) && !contains(killPoints, o.killDuring) {
		return o, fmt.Errorf("-kill-self-during %q: one of %s", o.killDuring, strings.Join(append(slices.Clone(allFaults), killPoints...), ","))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.chainsSet = set["chains"]
	if *short {
		// Set only what the command line did not.
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
		def("rootfs", func() { o.rootfs = rootTmpfs })
		def("db-pool", func() { o.dbPool = "" })
	}
	switch o.rootfs {
	case rootImage, rootTmpfs, rootDir:
	default:
		return o, fmt.Errorf("-rootfs %q: image, tmpfs or dir", o.rootfs)
	}
	if o.seed == 0 {
		o.seed = time.Now().UnixNano()
	}
	o.bin, o.work = abs(o.bin), abs(o.work)
	if o.app != "" {
		o.app = abs(o.app)
	}
	// The run's command line as the journal keeps it: the later flags win.
	o.args = append(append([]string{}, args...), "-bin", o.bin, "-work", o.work, "-seed", fmt.Sprint(o.seed))
	if o.app != "" {
		o.args = append(o.args, "-app", o.app)
	}
	return o, nil
}

// resumedOptions are the options of a run resumed from its journal (past):
// the run's own, from its first record, the chains it grew to since, and
// of this command line (now) only what is about this life of the driver,
// and -chains to grow it. Its plan is the same groups, in the same order,
// each the same chains (plan), so a run grown by -chains keeps every group
// it has and adds the next ones; a smaller -chains drops groups planned
// and never submitted, but not one submitted (it would be neither checked
// nor purged).
func resumedOptions(past []rec, now options) (options, error) {
	if len(past) == 0 || past[0].T != "options" {
		return now, errors.New("the journal does not begin with the run's options")
	}
	o, err := parseOptions(past[0].Args)
	if err != nil {
		return o, fmt.Errorf("the journal's options: %w", err)
	}
	for _, r := range past {
		if r.T == "resume" && r.Chains > 0 {
			o.chains = r.Chains // the last life's
		}
	}
	if now.chainsSet {
		o.chains = now.chains
		planned := (o.chains + o.batch - 1) / o.batch // groups b00000 to b(planned-1)
		for _, r := range past {
			var b int
			if (r.T == "submit" || r.T == "submitted") && len(r.Group) == 6 && r.Group[0] == 'b' {
				if _, err := fmt.Sscanf(r.Group[1:], "%d", &b); err == nil && b >= planned {
					return o, fmt.Errorf("-chains %d: the run submitted group %s, beyond the %d groups of that many chains", now.chains, r.Group, planned)
				}
			}
		}
	}
	o.resume, o.killAfter, o.killDuring = true, now.killAfter, now.killDuring
	if now.dbPool != "" {
		o.dbPool = now.dbPool
	}
	return o, nil
}
