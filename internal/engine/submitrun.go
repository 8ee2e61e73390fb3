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
// with one create_work run, all or nothing, overlapping the three parts:
// create_work (a process of its own) starts at once and reads each chain's
// job as soon as the chain is recorded and its inputs are staged, and the
// inputs are staged by workers while the chains are inserted.
//
// Staging runs inside the recording transaction: pool collection unstages,
// under the same write lock, what no unfinished step reads, so it cannot
// take a link away before the steps that read it exist. create_work inserts
// its jobs only when its input ends, after the commit: if the recording
// fails it is killed first and creates nothing; if create_work fails, the
// chains are removed again.
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
	if run == nil {
		wc, err := e.creator(ctx)
		if err != nil {
			return nil, err
		}
		if run, err = wc.start(ctx, params); err != nil {
			return nil, err
		}
	}
	st := newStager(e, chains, in)
	feed := startFeed(run, st, len(chains))
	var pooled func() []store.PoolEntry
	if in != nil {
		pooled = in.pooled
	}
	created, err := e.db.CreateChainsPooling(ctx, u, chains, store.Quota{MaxRunning: e.Cfg.MaxRunningChains, MaxPoolBytes: e.Cfg.MaxPoolBytes}, func(i int, c store.Chain) error {
		if i == 0 {
			st.start(ctx)
		}
		if err := feed.send(feedJob{job: boinc.Job{WUName: c.WU(0), WUTemplate: c.WUTmpl, ResultTemplate: c.ResTmpl, Priority: c.Priority, CommandLine: c.Args}, inputs: chains[i].Inputs}); err != nil {
			return err
		}
		if i == len(chains)-1 {
			return st.wait() // everything staged before the commit
		}
		return nil
	}, pooled)
	if err == nil && in != nil {
		in.markRecorded()
	}
	tRecorded := time.Now()
	feed.close()
	st.stop()
	var tFed, tDurable, tFinished time.Time
	if err != nil {
		feed.wait()
		run.Abort()
		return nil, err
	}
	// What create_work's jobs read is made durable while create_work still
	// reads its input (it is the slower of the two); it inserts the jobs
	// only when its input ends, after both.
	durable := make(chan error, 1)
	go func() { durable <- e.durableForBOINC(st.sums, st.anyStaged()) }()
	ferr := feed.wait()
	tFed = time.Now()
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
	// Clean up even when the request was cancelled (the client went away).
	bg := context.WithoutCancel(ctx)
	if ferr != nil {
		ids := make([]int64, len(created))
		for i, c := range created {
			ids[i] = c.ID
		}
		if derr := e.db.DeleteChains(bg, ids); derr != nil {
			e.Log.Error("removing chains after a failed create_work", "err", derr)
		}
		return nil, ferr
	}
	wus := make([]string, len(created))
	for i, c := range created {
		wus[i] = c.WU(0)
	}
	if err := e.db.SetStepState(bg, wus, "queued"); err != nil {
		return nil, fmt.Errorf("the work units exist but recording them as queued failed: %w", err)
	}
	e.observe(ctx, store.LatencyCreateWork, t0)
	e.Log.Debug("submission timing", "chains", len(created), "record_ms", ms(tRecorded.Sub(t0)),
		"fed_ms", ms(tFed.Sub(tRecorded)), "durable_ms", ms(tDurable.Sub(tRecorded)), "create_work_finish_ms", ms(tFinished.Sub(tDurable)), "queued_ms", ms(time.Since(tFinished)),
		"create_work_cpu_ms", ms(run.CPU()))
	return created, nil
}

// feedJob is a recorded chain's first job, waiting for its inputs.
type feedJob struct {
	job    boinc.Job
	inputs []string // content per input position; "" for a constant file
}

// createWorkFeed is create_work fed by a goroutine while the recording
// transaction runs. recordAndCreate keeps its rules by using only these
// methods:
//   - send never blocks (the feed holds every chain's job): the
//     transaction, which holds the state database's write lock, never
//     waits for create_work;
//   - send returns the feeder's failure, if any, so that the recording
//     stops at the next chain and rolls back;
//   - close ends the feed once the recording is over, and wait waits for
//     the feeder; create_work inserts its jobs only when its input ends
//     (run.Finish), so a recording that failed aborts it and nothing is
//     created.
type createWorkFeed struct {
	jobs   chan feedJob
	failed atomic.Pointer[error] // the feeder's error, once it failed
	done   chan error            // the feeder's end
}

// startFeed starts feeding run the jobs of n chains, each once st has
// staged its inputs.
func startFeed(run workRun, st *stager, n int) *createWorkFeed {
	f := &createWorkFeed{jobs: make(chan feedJob, n), done: make(chan error, 1)}
	go func() {
		err := feedCreateWork(run, st, f.jobs)
		if err != nil {
			f.failed.Store(&err)
		}
		f.done <- err
	}()
	return f
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
func (f *createWorkFeed) wait() error { return <-f.done }

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
	select {
	case <-ch:
		return nil
	case <-s.failed:
		return s.err
	}
}

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

// stillStaged tells whether content sum's download link and sidecar are in
// place. Asked under the recording's write lock about a content this very
// submission staged, it finds whether pool collection took them away
// meanwhile; once the recording commits, collection leaves them alone.
func (e *Engine) stillStaged(sum string) bool {
	dst := e.Proj.DownloadPath(pool.PhysicalName(sum))
	_, err := os.Lstat(dst)
	_, serr := os.Lstat(dst + ".md5")
	return err == nil && serr == nil
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
