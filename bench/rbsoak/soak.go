package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// soak is one run: the site, its actors and what they recorded.
type soak struct {
	ctx context.Context
	o   options

	rmu sync.Mutex
	rng *rand.Rand

	mnt, root string
	mounted   bool
	url       string
	users     []*user
	server    *proc
	creator   *proc
	notifier  *proc
	hostB     *host2 // the second host (fault host2), nil without it
	hooks     *webhooks
	masters   masters
	gahps     gahpSessions

	// MariaDB mode
	db          *mariadbtest.Server
	dbDir       string // where MariaDB runs: a short link under /tmp (its socket's path)
	dbData      string // what it links to, in the work directory (outlives a stop of the machine)
	stateURL    string
	boincURL    string
	boincDBFile string
	dbMu        sync.RWMutex // held for writing while MariaDB is down

	mu       sync.Mutex
	problems []string
	skipped  map[string]string
	faults   map[string]int
	// senderKills are the kills of the server and the notifier, for
	// telling the webhook repeats they explain.
	senderKills []senderKill
	retries     map[string]int // client retries by command
	groups      []*group
	stepsOK     int // steps of finished chains, checked
	chainsOK    int
	baseline    leftovers
	samples     []sample
	started     time.Time
	inputs      string // directory of the submitters' input files
	tmp         string // the TMPDIR of every process of the soak
	leftBytes   int64
	wuDone      int64           // work units BOINC finished (a canonical result), all groups
	wuAll       int64           // work units made
	wuErr       error           // why they could not be counted
	runCtx      context.Context // the whole run's, for work a fault starts
	extra       sync.WaitGroup  // groups a fault started
	cpu         *cpuBook
	gahpBatches int // GAHP batches run to their end and checked

	j   *journal // the ledger on disk (journal.go)
	led *ledger  // with -resume: what the journal said
	seg int      // this life of the driver (0: the first)
	// clientN: the client fault's submissions begun (its groups k00000...).
	clientN int
	segs    []segment // the earlier ones
}

func newSoak(ctx context.Context, o options) (*soak, error) {
	s := &soak{ctx: ctx, o: o, rng: rand.New(rand.NewPCG(uint64(o.seed), 7)),
		skipped: map[string]string{}, faults: map[string]int{}, retries: map[string]int{}, cpu: newCPUBook()}
	for _, k := range strings.Split(o.faults, ",") {
		if k = strings.TrimSpace(k); k != "" && k != "all" && !contains(allFaults, k) {
			return nil, fmt.Errorf("no fault %q (faults: %s)", k, strings.Join(allFaults, ","))
		}
	}
	if !o.mariadb && o.faults != "all" && contains(strings.Split(o.faults, ","), "mariadb") {
		return nil, errors.New("the mariadb fault needs -mariadb (the state and BOINC's database on MariaDB)")
	}
	if !o.mariadb && s.want("mariadb") && o.faults == "all" {
		s.skipped["mariadb"] = "the state and BOINC's database are on SQLite (run with -mariadb)"
	}
	if err := privateDir(o.work); err != nil {
		return nil, err
	}
	if s.want("master") && s.masterBinary() == "" {
		s.skipped["master"] = errNoMaster.Error()
	}
	s.inputs = filepath.Join(o.work, "inputs")
	if err := os.MkdirAll(s.inputs, 0o755); err != nil {
		return nil, err
	}
	// Every process of the soak gets a TMPDIR of its own, checked empty
	// at the end.
	s.tmp = filepath.Join(o.work, "tmp")
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, err
	}
	os.Setenv("TMPDIR", s.tmp)
	var err error
	jpath := filepath.Join(o.work, journalFile)
	if o.resume {
		err := s.openResumed(ctx, jpath)
		if err == nil && s.want("host2") {
			if why := host2Skip(s.o.mariadb); why != "" {
				s.skip("host2", why)
			} else {
				err = s.setupHost2(ctx) // its root is kept: its spool is its own
			}
		}
		if err != nil {
			s.close()
			return nil, err
		}
		return s, nil
	}
	if resumable(jpath) {
		return nil, fmt.Errorf("%s holds a run that can go on (%s): -resume goes on with it; or give a new work directory", o.work, journalFile)
	}
	os.Remove(jpath) // a run that ended, or that cannot be resumed
	if s.j, err = openJournal(jpath, o.noJournal); err != nil {
		return nil, err
	}
	s.j.addSync(rec{T: "options", Args: o.args})
	if s.hooks, err = startWebhooks("127.0.0.1:0", s.j); err != nil {
		return nil, err
	}
	if s.want("host2") {
		if why := host2Skip(o.mariadb); why != "" {
			s.skip("host2", why)
		}
	}
	err = s.setupSite(ctx)
	if err == nil && s.want("host2") {
		err = s.setupHost2(ctx)
	}
	if err != nil {
		// What it set up goes: the tmpfs, MariaDB, the webhook receiver
		// (main exits without the soak to close).
		s.close()
		return nil, err
	}
	return s, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// want tells whether fault kind k is asked for and not skipped.
func (s *soak) want(k string) bool {
	if s.skipped[k] != "" {
		return false
	}
	return s.o.faults == "all" || contains(strings.Split(s.o.faults, ","), k)
}

func (s *soak) skip(k, why string) {
	s.mu.Lock()
	s.skipped[k] = why
	s.mu.Unlock()
	fmt.Printf("fault %s skipped: %s\n", k, why)
}

func (s *soak) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.problems = append(s.problems, msg)
	n := len(s.problems)
	s.mu.Unlock()
	// A resumed run fails on it too.
	s.j.addSync(rec{T: "problem", Out: msg})
	if n <= 50 {
		fmt.Println("PROBLEM:", msg)
	}
}

// run drives the soak until every chain is checked and purged, then
// checks what is left and prints the figures.
func (s *soak) run() ([]string, error) {
	if s.server == nil {
		return nil, errors.New("the site did not start")
	}
	if s.led == nil {
		var err error
		if s.baseline, err = s.leftovers(); err != nil {
			return nil, fmt.Errorf("taking the empty root's inventory: %w", err)
		}
		s.j.addSync(rec{T: "site", Site: s.siteRec()})
	}
	s.started = time.Now()
	s.j.addSync(rec{T: "start", Seg: s.seg})
	if s.o.killAfter > 0 && s.o.killDuring == "" {
		time.AfterFunc(s.o.killAfter, s.killWhole)
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.o.duration)
	defer cancel()
	s.runCtx = ctx
	// What every goroutine waits on shortly before the bound, printed
	// when the run does not end within it: a stall's place.
	var stacks strings.Builder
	var stacksMu sync.Mutex
	dump := time.AfterFunc(s.o.duration-min(s.o.duration/10, 15*time.Second), func() {
		stacksMu.Lock()
		defer stacksMu.Unlock()
		pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		s.mu.Lock()
		fmt.Fprintf(&stacks, "faults so far: %v\n", s.faults)
		s.mu.Unlock()
	})
	defer dump.Stop()

	var wg sync.WaitGroup
	actors, stopActors := context.WithCancel(ctx)
	defer stopActors()
	wg.Add(1)
	go func() { defer wg.Done(); s.sampleLoop(actors) }()
	cpuCtx, stopCPU := context.WithCancel(s.ctx)
	cpuDone := make(chan struct{})
	go func() { s.cpuLoop(cpuCtx); close(cpuDone) }()
	faultsDone := make(chan struct{})
	go func() { s.faultLoop(actors); close(faultsDone) }()
	for _, u := range s.users {
		wg.Add(1)
		go func() { defer wg.Done(); s.retrieveLoop(actors, u) }()
	}
	if s.masterBinary() != "" {
		wg.Add(1)
		go func() { defer wg.Done(); s.masterLoop(actors) }()
	}
	if _, err := os.Stat(filepath.Join(s.o.bin, "rboinc-gahp")); err == nil {
		wg.Add(1)
		go func() { defer wg.Done(); s.gahpLoop(actors) }()
	}
	// The submitters share the chains out by batches; each user's groups
	// are checked and purged by that user's finisher as they end.
	work := s.plan()
	if s.led != nil {
		s.resumeGroups(ctx, work)
	}
	var subWG sync.WaitGroup
	for _, u := range s.users {
		subWG.Add(1)
		go func() { defer subWG.Done(); s.submitLoop(ctx, u, work[u.name]) }()
	}
	subWG.Wait()
	// Wait for the faults' minimum, then stop faulting.
	for ctx.Err() == nil && !s.faultsEnough() {
		time.Sleep(200 * time.Millisecond)
	}
	stopActors()
	<-faultsDone
	wg.Wait()
	if why := unfinished(s.ctx, ctx, s.o.duration); why != "" {
		s.problem("%s", why)
		if s.ctx.Err() == nil {
			s.reportStuck()
			stacksMu.Lock()
			fmt.Printf("the driver's goroutines shortly before the bound:\n%s\n", stacks.String())
			stacksMu.Unlock()
		}
	}
	elapsed := time.Since(s.started)
	if s.led != nil {
		var line string
		elapsed, line = segmentsLine(append(slices.Clone(s.segs), segment{start: s.started}), time.Now())
		fmt.Println(line)
	}
	s.wuDone, s.wuAll, s.wuErr = s.countWorkUnits()
	// Everything ended and was purged: the end checks, on a quiet site.
	s.restoreAll()
	s.checkEvents()
	if ctx.Err() == nil {
		s.checkLeftovers()
		s.checkTemp()
	} else {
		fmt.Println("leftovers not checked: groups that never ended were not purged")
	}
	s.checkFlat()
	s.checkSecrets()
	stopCPU()
	<-cpuDone
	s.report(elapsed)
	if s.ctx.Err() == nil {
		s.j.addSync(rec{T: "end"})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sort.Strings(s.problems)
	return s.problems, nil
}

// unfinished says why a run whose whole context is whole and whose bounded
// one (-duration) is run did not end, "" when it did: stopped by a signal,
// what was not checked did not pass.
func unfinished(whole, run context.Context, bound time.Duration) string {
	switch {
	case whole.Err() != nil:
		return "interrupted before every chain was checked"
	case run.Err() != nil:
		return fmt.Sprintf("the run did not finish within -duration %s", bound)
	}
	return ""
}

// restoreAll makes sure every process runs again after the last fault.
func (s *soak) restoreAll() {
	for _, p := range []*proc{s.server, s.creator, s.notifier} {
		if p.pid() == 0 {
			p.start()
		}
	}
	s.waitServer(s.ctx, 30*time.Second)
	if s.hostB != nil {
		s.startHost2(s.ctx)
	}
}

// reportStuck prints, for the groups that never ended, their chains by
// state and reason.
func (s *soak) reportStuck() {
	s.mu.Lock()
	gs := slices.Clone(s.groups)
	s.mu.Unlock()
	n := 0
	for _, g := range gs {
		g.mu.Lock()
		done := g.finished
		g.mu.Unlock()
		if done {
			continue
		}
		st, ok := s.status(s.ctx, g)
		if !ok {
			fmt.Printf("  not finished: %s/%s: its status could not be read\n", g.user.name, g.name)
			continue
		}
		by := map[string]int{}
		for _, c := range st {
			if !terminal[c.State] {
				by[c.State+": "+c.Reason]++
				n++
			}
		}
		for k, c := range by {
			fmt.Printf("  still running: %s/%s: %d chains %s\n", g.user.name, g.name, c, k)
		}
		if len(by) == 0 {
			fmt.Printf("  not finished: %s/%s: every chain ended, the driver did not finish the group (see the goroutines below)\n", g.user.name, g.name)
		}
	}
	if n > 0 {
		s.problem("%d chains never ended", n)
	}
}
