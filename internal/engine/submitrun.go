package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
)

// stageWorkers stage a submission's contents in parallel: each new content
// costs two new files (a link and a .md5 sidecar), and the kernel spends
// most of that time on its own CPU work, which two cores share.
const stageWorkers = 2

// recordAndCreate records the chains and creates their first work units
// with one create_work run, all or nothing, overlapping the parts: the
// run starts at once, the inputs are staged by workers while the chains
// are inserted, and native creation is handed each chain's job as soon as
// the chain is recorded and its inputs are staged.
//
// Staging runs inside the recording transaction: pool collection unstages,
// under the same write lock, what no unfinished step reads, so it cannot
// take a link away before the steps that read it exist. No work unit may
// exist before its chain is committed. Native creation inserts its jobs
// ahead, beside the recording, but commits them only at Finish, after the
// recording's commit and the durability point. BOINC's create_work inserts as it
// reads (an assigned job at once, the others in ~1 MB chunks), so it is
// given no job before the commit: if the recording fails it is killed
// having read none. After the commit a crash leaves steps "creating" that
// revival creates; if create_work fails, the work units it made before
// failing are cancelled in BOINC and the chains removed again.
//
// in, when not nil, is still writing (and staging) the submission's inline
// contents: the jobs that read them wait for them, the commit waits for
// all of them, and they enter the pool's index in the same transaction.
//
// run, when not nil, is a create_work run started earlier for params (it
// then starts while the request is still read); recordAndCreate ends it
// either way.
func (e *Engine) recordAndCreate(ctx context.Context, u store.User, params boinc.WorkParams, chains []store.NewChain, in *intake, run workRun) ([]store.Chain, error) {
	t0 := time.Now()
	wc, err := e.creator(ctx)
	if err != nil {
		if run != nil {
			run.Abort()
		}
		return nil, err
	}
	if run == nil {
		if run, err = wc.start(ctx, params); err != nil {
			return nil, err
		}
	}
	insertsAsRead := wc.insertsAsItReads()
	if x, ok := run.(expectRun); ok {
		x.Expect(len(chains)) // before the feeder's first Add
	}
	st := newStager(e, chains, in)
	feed := newFeed(run, st, len(chains))
	if !insertsAsRead {
		feed.begin()
	}
	var pooled func() []store.PoolEntry
	if in != nil {
		pooled = in.pooled
	}
	var tInserted, tStaged time.Time
	var contents <-chan error // the staged files' durability, once begun
	created, err := e.db.CreateChainsPooling(ctx, u, chains, store.Quota{MaxRunning: e.Cfg.MaxRunningChains, MaxPoolBytes: e.Cfg.MaxPoolBytes}, func(i int, c store.Chain) error {
		if i == 0 {
			st.start(ctx)
		}
		if err := feed.send(feedJob{job: boinc.Job{WUName: c.WU(0), WUTemplate: c.WUTmpl, ResultTemplate: c.ResTmpl, Priority: c.Priority, CommandLine: c.Args}, inputs: chains[i].Inputs}); err != nil {
			return err
		}
		if i == len(chains)-1 {
			tInserted = time.Now()
			err := st.wait() // everything staged before the commit
			tStaged = time.Now()
			if err == nil && contents == nil {
				// Every file the jobs read is in place: its durability
				// begins beside the rest of the recording.
				contents = e.startDurableContents(st.sums, st.anyStaged())
			}
			return err
		}
		return nil
	}, pooled)
	if err == nil && in != nil {
		in.markRecorded()
	}
	tRecorded := time.Now()
	feed.close()
	if err == nil && insertsAsRead {
		feed.begin() // every job, now that their chains are committed
	}
	st.stop()
	var tFed, tDurable, tFinished time.Time
	if err != nil {
		feed.wait()
		run.Abort()
		return nil, err
	}
	// What create_work's jobs read is made durable while create_work still
	// reads its input (it is the slower of the two), the files' part
	// begun before the commit. Native creation inserts the jobs only at
	// Finish, after both; BOINC's create_work may insert some sooner: the
	// steps are committed and their inputs staged already, and the sync
	// only guards against the machine's crash.
	if contents == nil { // no chain reached the end of staging (none to record)
		contents = e.startDurableContents(st.sums, st.anyStaged())
	}
	durable := make(chan error, 1)
	go func() { durable <- e.durableState(contents) }()
	ferr := feed.wait()
	tFed = time.Now()
	// Clean up even when the request was cancelled (the client went away).
	bg := context.WithoutCancel(ctx)
	wus := make([]string, len(created))
	for i, c := range created {
		wus[i] = c.WU(0)
	}
	// A run that holds its jobs inserted ahead finishes without waiting
	// for any lock: the steps are marked queued meanwhile, in a
	// transaction that commits only after BOINC's (see queueWhenCreated).
	var marked <-chan error
	finished := make(chan error, 1)
	if a, ok := run.(aheadRun); ok && ferr == nil && a.InsertedAhead() {
		marked = e.queueWhenCreated(bg, wus, finished)
	}
	if derr := <-durable; ferr == nil {
		ferr = derr
	}
	tDurable = time.Now()
	if ferr == nil {
		ferr = run.Finish()
		tFinished = time.Now()
	} else {
		run.Abort()
	}
	finished <- ferr
	if ferr != nil {
		if marked != nil {
			<-marked // rolled back: the chains go below
		}
		return nil, e.undoSubmission(bg, created, insertsAsRead, ferr)
	}
	if marked == nil {
		marked = e.queueWhenCreated(bg, wus, finished)
	}
	if err := <-marked; err != nil {
		return nil, fmt.Errorf("the work units exist but recording them as queued failed: %w", err)
	}
	e.observe(ctx, store.LatencyCreateWork, t0)
	e.Log.Debug("submission timing", "chains", len(created), "record_ms", ms(tRecorded.Sub(t0)),
		"inserted_ms", ms(tInserted.Sub(t0)), "staged_ms", ms(tStaged.Sub(t0)),
		"fed_ms", ms(tFed.Sub(tRecorded)), "durable_ms", ms(tDurable.Sub(tRecorded)), "create_work_finish_ms", ms(tFinished.Sub(tDurable)), "queued_ms", ms(time.Since(tFinished)),
		"create_work_cpu_ms", ms(run.CPU()))
	return created, nil
}

// aheadRun is a run that may hold its jobs inserted ahead of Finish
// (wucreate.Run.InsertAhead).
type aheadRun interface{ InsertedAhead() bool }

// expectRun is a run told how many jobs come, so that it holds BOINC's
// database's lock only for the last ones (wucreate.AheadTail).
type expectRun interface{ Expect(n int) }

// queueWhenCreated marks the steps of work units wus queued in a
// transaction that commits only once finished says that they all exist in
// BOINC (nil); an error there rolls the marking back. No step is queued
// without its work unit, even for a moment, and a crash before the commit
// leaves them creating, for revival. Started before BOINC's commit, it
// must only be when that commit waits for no lock of another (a run
// holding its jobs inserted ahead): the marking holds the state
// database's write lock meanwhile.
func (e *Engine) queueWhenCreated(ctx context.Context, wus []string, finished <-chan error) <-chan error {
	marked := make(chan error, 1)
	go func() {
		marked <- e.db.SetStepStateAfter(ctx, wus, store.StateQueued, func() error { return <-finished })
	}()
	return marked
}

// undoSubmission's calls to BOINC's database and to the state's:
// variables, so that a test can make them fail as databases killed at that
// moment would.
var (
	cancelWUsOf = (*Engine).cancelWUs
	failChainOf = (*store.DB).FailChain
)

// undoSubmission removes the chains of a submission whose work units could
// not all be made (ferr says why). A creator that inserts as it reads may
// have made some: they are cancelled in BOINC first, as its cancel_jobs
// does, so that none runs for a chain that is gone. When BOINC's database
// cannot tell which exist, the chains are kept, failed with the reason,
// rather than leave work units without them.
func (e *Engine) undoSubmission(ctx context.Context, created []store.Chain, insertsAsRead bool, ferr error) error {
	if insertsAsRead {
		wus := make([]string, len(created))
		for i, c := range created {
			wus[i] = c.WU(0)
		}
		n, err := cancelWUsOf(e, ctx, wus)
		if err != nil {
			e.Log.Error("cancelling the work units of a failed create_work run; its chains are kept, failed", "chains", len(created), "err", err)
			reason := fmt.Sprintf("creating the first work unit failed (%v), and BOINC's database could not be asked which work units were made: %v", ferr, err)
			for i, c := range created {
				if err := failChainOf(e.db, ctx, c.ID, 0, reason); err != nil {
					// The state database is away too: the chains not marked
					// stay running, their first steps creating under this
					// live process, which nobody else would create (a
					// resubmission is answered with them). The creator
					// takes them over once the databases are back.
					e.Log.Error("marking chains failed after a failed create_work; their first steps go to the creator", "chains", len(created)-i, "err", err)
					e.db.HandToCreator(wus[i:])
					break
				}
			}
			return fmt.Errorf("%w; the chains are recorded as failed: BOINC's database could not be asked which of their work units create_work had made", ferr)
		}
		if n > 0 {
			e.Log.Warn("create_work failed after making some work units; cancelled them in BOINC", "work_units", n, "err", ferr)
		}
	}
	ids := make([]int64, len(created))
	for i, c := range created {
		ids[i] = c.ID
	}
	if derr := e.db.DeleteChains(ctx, ids); derr != nil {
		e.Log.Error("removing chains after a failed create_work", "err", derr)
	}
	return ferr
}

// feedJob is a recorded chain's first job, waiting for its inputs.
type feedJob struct {
	job    boinc.Job
	inputs []string // content per input position; "" for a constant file
}

// createWorkFeed is a creation run fed by a goroutine, while the recording
// transaction runs (begun before it) or once it committed (begun after).
// recordAndCreate keeps its rules by using only these methods:
//   - send never blocks (the feed holds every chain's job): the
//     transaction, which holds the state database's write lock, never
//     waits for create_work;
//   - send returns the feeder's failure, if any, so that the recording
//     stops at the next chain and rolls back;
//   - close ends the feed once the recording is over, and wait waits for
//     the feeder (if begun); a run begun during the recording must insert
//     its jobs only at Finish, so that a recording that failed aborts it
//     and nothing is created.
type createWorkFeed struct {
	run    workRun
	st     *stager
	jobs   chan feedJob
	begun  bool
	failed atomic.Pointer[error] // the feeder's error, once it failed
	done   chan error            // the feeder's end
}

// newFeed makes a feed of the jobs of n chains to run, each handed over
// once st has staged its inputs and begin was called.
func newFeed(run workRun, st *stager, n int) *createWorkFeed {
	return &createWorkFeed{run: run, st: st, jobs: make(chan feedJob, n), done: make(chan error, 1)}
}

// begin starts the feeder; a second call does nothing (two feeders would
// hand the run jobs at once, and one could still add after Finish).
func (f *createWorkFeed) begin() {
	if f.begun {
		return
	}
	f.begun = true
	go func() {
		err := feedCreateWork(f.run, f.st, f.jobs)
		if err != nil {
			f.failed.Store(&err)
		}
		f.done <- err
	}()
}

// send queues a recorded chain's job; it returns the feeder's error when
// feeding failed already.
func (f *createWorkFeed) send(fj feedJob) error {
	if p := f.failed.Load(); p != nil {
		return *p
	}
	f.jobs <- fj
	return nil
}

// close says no job follows.
func (f *createWorkFeed) close() { close(f.jobs) }

// wait waits for the feeder to hand over every job, or fail; once only.
// A feed never begun handed over nothing.
func (f *createWorkFeed) wait() error {
	if !f.begun {
		return nil
	}
	return <-f.done
}

// feedCreateWork hands each job to create_work once its inputs are staged,
// sending what is buffered whenever it has caught up with the recording.
func feedCreateWork(run workRun, st *stager, feed <-chan feedJob) error {
	knower, _ := run.(inputKnower)
	told := map[string]bool{}
	for fj := range feed {
		for _, sum := range fj.inputs {
			if sum == "" {
				continue // constant file: BOINC finds it by its <physical_name>
			}
			if err := st.waitFor(sum); err != nil {
				return err
			}
			name := pool.PhysicalName(sum)
			if knower != nil && !told[sum] {
				told[sum] = true
				knower.Know(name, sum, st.size(sum))
			}
			fj.job.Files = append(fj.job.Files, name)
		}
		if err := st.e.stageGzips(fj.job); err != nil {
			return err
		}
		if err := run.Add(fj.job); err != nil {
			return err
		}
		if len(feed) == 0 {
			if err := run.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stager stages the distinct contents of a submission, in order of first
// use, on a few workers; waitFor lets the feeder follow. Contents that an
// intake writes and stages are waited for instead, then looked at once
// more under the recording's lock.
type stager struct {
	e      *Engine
	in     *intake // nil: no inline contents on their way
	sums   []string
	sizes  []int64 // of sums[i], once staged
	index  map[string]int
	done   map[string]chan struct{}
	next   atomic.Int64
	wg     sync.WaitGroup
	cancel context.CancelFunc

	failOnce sync.Once
	failed   chan struct{}
	err      error // set before failed is closed
}

func newStager(e *Engine, chains []store.NewChain, in *intake) *stager {
	s := &stager{e: e, in: in, done: map[string]chan struct{}{}, index: map[string]int{}, failed: make(chan struct{})}
	for _, c := range chains {
		for _, sum := range c.Inputs {
			if _, ok := s.done[sum]; !ok && sum != "" {
				s.done[sum] = make(chan struct{})
				s.index[sum] = len(s.sums)
				s.sums = append(s.sums, sum)
			}
		}
	}
	s.sizes = make([]int64, len(s.sums))
	return s
}

// anyStaged is the download path of one staged content ("" when none).
func (s *stager) anyStaged() string {
	if len(s.sums) == 0 {
		return ""
	}
	return s.e.Proj.DownloadPath(pool.PhysicalName(s.sums[0]))
}

func (s *stager) start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	for range min(stageWorkers, len(s.sums)) {
		s.wg.Add(1)
		go s.work(ctx)
	}
}

func (s *stager) work(ctx context.Context) {
	defer s.wg.Done()
	for {
		i := int(s.next.Add(1) - 1)
		if i >= len(s.sums) {
			return
		}
		if err := ctx.Err(); err != nil {
			s.fail(err)
			return
		}
		sum := s.sums[i]
		var err error
		if size, coming := s.in.provides(sum); coming {
			s.sizes[i] = size
			err = s.in.waitStaged(ctx, sum)
			if err == nil && !s.e.stillStaged(sum) {
				_, err = s.e.Pool.Stage(s.e.Proj, sum, size)
			}
		} else if fi, serr := os.Stat(s.e.Pool.Path(sum)); serr == nil {
			s.sizes[i] = fi.Size()
			_, err = s.e.Pool.Stage(s.e.Proj, sum, fi.Size())
		} else {
			err = fmt.Errorf("content %s is gone from the pool: %w", sum, serr)
		}
		if err != nil {
			s.fail(err)
			return
		}
		close(s.done[sum])
	}
}

func (s *stager) fail(err error) {
	s.failOnce.Do(func() {
		s.err = err
		close(s.failed)
	})
}

// waitFor waits until content sum is staged, or staging failed.
func (s *stager) waitFor(sum string) error {
	ch, ok := s.done[sum]
	if !ok {
		return fmt.Errorf("content %s was not among those to stage", sum)
	}
	// Staged wins over failed: stop marks the end of staging as a failure
	// for those still waiting, after every content may have been staged.
	select {
	case <-ch:
		return nil
	default:
	}
	if betweenStagedLooks != nil {
		betweenStagedLooks()
	}
	select {
	case <-ch:
		return nil
	case <-s.failed:
		// Both may be ready by now (the feeder was descheduled between
		// its looks while staging ended): a select picks either.
		select {
		case <-ch:
			return nil
		default:
			return s.err
		}
	}
}

// betweenStagedLooks, when set (tests), runs between waitFor's two looks.
var betweenStagedLooks func()

// size is the size of content sum, which waitFor has seen staged.
func (s *stager) size(sum string) int64 { return s.sizes[s.index[sum]] }

// wait waits for every content to be staged, and every inline content to
// be written, even one that no job reads.
func (s *stager) wait() error {
	s.wg.Wait()
	select {
	case <-s.failed:
		return s.err
	default:
	}
	if int(s.next.Load()) < len(s.sums) {
		return errors.New("staging stopped before every content was staged")
	}
	if s.in != nil {
		return s.in.waitAll()
	}
	return nil
}

// stillStaged tells whether content sum's download link and sidecar (when
// the pool writes them) are in place. Asked under the recording's write
// lock about a content this very submission staged, it finds whether pool
// collection took them away meanwhile; once the recording commits,
// collection leaves them alone.
func (e *Engine) stillStaged(sum string) bool {
	dst := e.Proj.DownloadPath(pool.PhysicalName(sum))
	if _, err := os.Lstat(dst); err != nil {
		return false
	}
	if e.Pool.NoSidecars {
		return true
	}
	_, serr := os.Lstat(dst + ".md5")
	return serr == nil
}

// stop ends the workers (when started) and waits for them.
func (s *stager) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
	// Whoever still waits must not wait for contents nobody stages.
	s.fail(context.Canceled)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
