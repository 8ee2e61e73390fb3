package standin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
)

// Volunteer computes the project's work units and assimilates them like
// BOINC's daemons would: it plays the transitioner (creating results), a
// volunteer host (running <project>/apps/<app>/run in a fresh slot), the
// validator (first success is canonical), script_assimilator (the hook, via
// the shell, from tmp_<host>) and file_deleter.
type Volunteer struct {
	ProjectDir string
	Parallel   int           // WUs computed at once; default config.xml's rboinc_standin_slots, else 4
	Poll       time.Duration // default 250ms: new work is picked up within a second
	HookRetry  time.Duration // default 5s: after a hook exits non-zero, the app's assimilation stalls this long, then retries the SAME WU first (bin/start --cron restarting the daemon)
	AppTimeout time.Duration // default 1h
	Logger     *slog.Logger
	// Standby: while another volunteer (another host's server on the same
	// project) holds the project, wait for it and take over when it ends,
	// instead of failing. BOINC's daemons keep running when a web host
	// goes; a second host's `serve` on a shared project is that spare.
	Standby bool
}

// standbyPoll is how often a standby volunteer tries the project's lock.
const standbyPoll = time.Second

// sim is one running Volunteer.
type sim struct {
	dir        string
	db         *boincdb.DB
	log        *slog.Logger
	parallel   int
	poll       time.Duration
	hookRetry  time.Duration
	appTimeout time.Duration

	wake     chan struct{} // a full pass of every daemon, now
	slotFree chan struct{} // a slot freed: the host asks the scheduler for work
	wg       sync.WaitGroup

	mu        sync.Mutex
	running   int
	assimBusy map[string]bool
	reported  map[string]string // last problem logged per key, to log each once
}

// Run works until ctx is done, then waits for its apps and hooks to stop and
// returns nil. Results interrupted by the stop are computed again by the
// next Run; a WU whose hook was interrupted is assimilated again.
func (v *Volunteer) Run(ctx context.Context) error {
	p, err := boinc.LoadProject(v.ProjectDir)
	if err != nil {
		return fmt.Errorf("stand-in volunteer: %w", err)
	}
	unlock, err := lockProject(p.Dir)
	for v.Standby && errors.Is(err, errProjectBusy) {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(standbyPoll):
		}
		unlock, err = lockProject(p.Dir)
	}
	if err != nil {
		return err
	}
	defer unlock()
	db, err := openDB(p.Dir)
	if err != nil {
		return err
	}
	defer db.Close()
	s := &sim{
		dir: p.Dir, db: db, log: v.Logger,
		parallel: v.Parallel, poll: v.Poll, hookRetry: v.HookRetry, appTimeout: v.AppTimeout,
		wake: make(chan struct{}, 1), slotFree: make(chan struct{}, 1), assimBusy: map[string]bool{}, reported: map[string]string{},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.log = s.log.With("component", "boinc-standin")
	if s.parallel <= 0 {
		s.parallel = p.StandinSlots
	}
	if s.parallel <= 0 {
		s.parallel = 4
	}
	if s.poll <= 0 {
		s.poll = 250 * time.Millisecond
	}
	if s.hookRetry <= 0 {
		s.hookRetry = 5 * time.Second
	}
	if s.appTimeout <= 0 {
		s.appTimeout = time.Hour
	}
	// A result left running by a previous run was interrupted: send it again.
	if _, err := db.ExecContext(ctx, `UPDATE result SET server_state = ?, sent_time = 0 WHERE server_state = ?`,
		serverUnsent, serverInProgress); err != nil {
		return fmt.Errorf("stand-in volunteer: resetting interrupted results: %w", err)
	}
	s.log.Info("volunteer host running", "slots", s.parallel)
	s.runDaemons(ctx)
	s.loop(ctx)
	s.wg.Wait()
	return nil
}

// loop runs every daemon's pass at each poll (or when woken), and between
// them the scheduler alone when a slot frees: as on BOINC, where the host's
// request is answered at once and the transitioner, the assimilator and
// the file deleter keep their own rhythm (a finished result is validated
// as it is reported).
func (s *sim) loop(ctx context.Context) {
	t := time.NewTicker(s.poll)
	defer t.Stop()
	full := true
	for {
		if full {
			s.pass(ctx)
		} else {
			s.schedule(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			full = true
		case <-s.wake:
			full = true
		case <-s.slotFree:
			full = false
		}
	}
}

// pass does one round of every daemon's work.
func (s *sim) pass(ctx context.Context) {
	p, err := boinc.LoadProject(s.dir)
	if s.report("config", err, "cannot read the project config") {
		return
	}
	if err := s.transitionDue(ctx, p); ctx.Err() == nil {
		s.report("transitioner", err, "transitioner pass failed")
	}
	s.scheduleWith(ctx, p)
	if err := s.startAssimilators(ctx); ctx.Err() == nil {
		s.report("assimilator", err, "assimilator pass failed")
	}
	if err := s.deleteFiles(ctx, p); ctx.Err() == nil {
		s.report("file_deleter", err, "file deleter pass failed")
	}
}

// schedule is the scheduler's answer to the host's request for work.
func (s *sim) schedule(ctx context.Context) {
	p, err := boinc.LoadProject(s.dir)
	if s.report("config", err, "cannot read the project config") {
		return
	}
	s.scheduleWith(ctx, p)
}

func (s *sim) scheduleWith(ctx context.Context, p *boinc.Project) {
	// BOINC's scheduler sends nothing while the project's stop_sched
	// file is there (bin/stop leaves it): work waits unsent.
	if _, err := os.Stat(filepath.Join(s.dir, "stop_sched")); err == nil {
		return
	}
	if err := s.assignJobs(ctx, p); ctx.Err() == nil {
		s.report("scheduler", err, "sending assigned work failed")
	}
	if err := s.dispatch(ctx, p); ctx.Err() == nil {
		s.report("feeder", err, "sending work failed")
	}
}

// report logs err under key unless the same error was logged last time;
// it returns whether err is non-nil.
func (s *sim) report(key string, err error, msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.reported, key)
		return false
	}
	if s.reported[key] != err.Error() {
		s.reported[key] = err.Error()
		s.log.Error(msg, "err", err)
	}
	return true
}

func (s *sim) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// freed says a slot is free again.
func (s *sim) freed() {
	select {
	case s.slotFree <- struct{}{}:
	default:
	}
}

// errProjectBusy: another volunteer holds the project's lock.
var errProjectBusy = errors.New("another volunteer is already running")

// lockProject makes sure one volunteer at a time works on a project.
func lockProject(dir string) (func(), error) {
	path := filepath.Join(dir, "standin.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("stand-in volunteer: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("stand-in volunteer: %w on %s", errProjectBusy, dir)
		}
		return nil, fmt.Errorf("stand-in volunteer: locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// Idle reports whether no WU is unsent, running, or waiting for
// assimilation (for tests and demos).
func Idle(projectDir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(projectDir, "config.xml")); err != nil {
		return false, fmt.Errorf("no stand-in project in %s (run InitProject first): %w", projectDir, err)
	}
	db, err := openDB(projectDir)
	if err != nil {
		return false, err
	}
	defer db.Close()
	return idleIn(db, projectDir)
}

// idleIn is Idle on a database already open.
func idleIn(db *boincdb.DB, projectDir string) (bool, error) {
	var n int
	err := db.QueryRow(`SELECT
		(SELECT count(*) FROM workunit WHERE transition_time <= ? OR assimilate_state = ? OR file_delete_state = ?) +
		(SELECT count(*) FROM result WHERE server_state IN (?, ?) OR file_delete_state = ?)`,
		time.Now().Unix(), assimReady, boincdb.FileDeleteReady, serverUnsent, serverInProgress, boincdb.FileDeleteReady).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("reading stand-in state in %s: %w", projectDir, err)
	}
	return n == 0, nil
}
