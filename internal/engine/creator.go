package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
)

// The hook spools its call (hook.go, package spool); the creator records the spooled calls
// (each chain's next step as pending) and makes the work units of all
// pending steps with one create_work run: BOINC runs the
// hook once per work unit, and a create_work process per call would bound
// the chains advanced per second by that process's start (reference 3b: 33
// ms per single job). One process at a time creates, under an flock on
// <root>/creator.lock. A long-running server (`serve`, `volunteer`, or the
// `creator` daemon) holds it for good, and then a hook call returns as soon
// as its call is spooled; when nobody holds it, the hook itself takes it and
// does the creator's work before it returns.

// creatorBatch bounds the steps of one create_work run.
const creatorBatch = 5000

// CreatorLockName is the creator's lock file in the server root.
const CreatorLockName = spool.LockName

func (e *Engine) lockCreator() (*os.File, error) { return spool.Lock(e.Root, false) }

// kickCreator makes sure the pending steps get created: by the process that
// holds the creator lock, or else by this one, now. A holder looks for
// pending steps again after it lets go of the lock, so a step recorded
// before a failed attempt to take the lock is never left behind.
func (e *Engine) kickCreator(ctx context.Context) error {
	f, err := e.lockCreator()
	if errors.Is(err, spool.ErrBusy) {
		e.pendingHint.Store(true) // for this process's RunCreator, if it holds the lock
		spool.AskPass(e.Root)     // for another process's, at its next look
		return nil
	}
	if err != nil {
		return err
	}
	return e.createHolding(ctx, f)
}

// createHolding does the creator's work while this process holds the
// creator lock f, which it drops; then, while work still waits, takes the
// lock again (unless another process has it) and goes on.
func (e *Engine) createHolding(ctx context.Context, f *os.File) error {
	for {
		_, err := e.creatorPass(ctx)
		f.Close() // drops the lock
		if err != nil {
			return err
		}
		more, err := e.workWaiting(ctx)
		if err != nil || !more {
			return err
		}
		if f, err = e.lockCreator(); errors.Is(err, spool.ErrBusy) {
			e.pendingHint.Store(true)
			return nil
		} else if err != nil {
			return err
		}
	}
}

// Every sweepEvery the creator removes unfinished spool entries (of hooks
// killed while they wrote) once they are unfinishedAge old: no running hook
// takes that long, and BOINC calls the hook again for their work units, so
// nothing waits for them. Every reviveEvery it takes over the steps left
// half-created by a submission whose process is gone (store.ReviveCreating:
// by its process lease), and those of an earlier version's, which name no
// process, once they are unfinishedAge old.
const (
	sweepEvery    = 10 * time.Minute
	unfinishedAge = time.Hour
)

// reviveEvery is how often the creator looks for steps whose submitting
// process is gone: with store.LeaseTTL it bounds how long such a step waits
// (a look costs one indexed query and a read of the few leases). A variable
// for the tests.
var reviveEvery = 10 * time.Second

// idleDBLook bounds how long a step recorded as pending by another process,
// which found the creator lock held and left it, waits for the creator.
var idleDBLook = time.Second // a variable for the tests

// creatorPass takes the spooled hook calls in and creates the pending
// steps; it returns how many of both it handled.
func (e *Engine) creatorPass(ctx context.Context) (int, error) {
	// An entry that cannot be read now holds back no other chain: the
	// pending steps are created all the same.
	n, ierr := advance.IntakeSpool(ctx, e.Chains())
	m, err := e.CreatePending(ctx)
	return n + m, errors.Join(ierr, err)
}

// workWaiting tells whether a hook call or a pending step waits.
func (e *Engine) workWaiting(ctx context.Context) (bool, error) {
	if more, err := e.spoolWaiting(); more || err != nil {
		return more, err
	}
	return e.db.AnyPending(ctx)
}

// RunCreator holds the creator lock until ctx ends and creates pending
// steps as they come, looking every poll while idle and every five polls
// while hook calls keep coming. It waits for the lock first (a
// hook may hold it for a moment). stop, when not nil, is asked before every
// look whether to quit (BOINC's stop_daemons trigger file).
func (e *Engine) RunCreator(ctx context.Context, poll time.Duration, stop func() bool) error {
	var f *os.File
	for {
		var err error
		f, err = e.lockCreator()
		if err == nil {
			break
		}
		if !errors.Is(err, spool.ErrBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
	defer f.Close()
	e.Log.Debug("creating the work units of pending steps", "poll", poll)
	var lastDB, lastSweep, lastRevive, lastInputCheck time.Time
	var inputCheck inputCheckState
	var inputChecking atomic.Bool
	var checker sync.WaitGroup
	defer checker.Wait()
	var streak failStreak
	for {
		if stop != nil && stop() {
			return nil
		}
		if time.Since(lastSweep) >= sweepEvery {
			lastSweep = time.Now()
			if n, err := spool.SweepUnfinished(e.Root, unfinishedAge); err != nil {
				e.Log.Error("sweeping the hook spool", "err", err)
			} else if n > 0 {
				e.Log.Warn("removed hook spool entries that hooks began and never finished (BOINC calls the hook again for those work units)", "entries", n)
			}
		}
		if time.Since(lastRevive) >= reviveEvery {
			lastRevive = time.Now()
			if n, err := e.db.ReviveCreating(ctx, time.Now().Add(-unfinishedAge)); err != nil {
				// Cut short by a shutdown (a serve that could not listen
				// stops at once) is no error to report.
				if ctx.Err() == nil {
					e.Log.Error("looking for steps left half-created", "err", err)
				}
			} else if n > 0 {
				e.Log.Warn("steps left half-created by a submission whose process is gone; creating them now", "steps", n)
				lastDB = time.Time{}
			}
		}
		// Beside the creation of steps, not in its way (a check of many
		// thousand work units takes a fraction of a second); one at a time.
		if time.Since(lastInputCheck) >= e.inputCheckEvery() && inputChecking.CompareAndSwap(false, true) {
			lastInputCheck = time.Now()
			checker.Go(func() {
				defer inputChecking.Store(false)
				e.runInputCheck(ctx, &inputCheck)
			})
		}
		e.maybeDuplicateLate(ctx)
		e.ExpireLeasesSoon(ctx)         // batches whose lease ended: within seconds
		asked := spool.ClearAsk(e.Root) // this pass serves whoever waits now
		// While idle, a look is one read of the spool directory: the
		// database is asked for pending steps only when calls came in,
		// somebody asked (a hook with a lone call, or a process without
		// the lock that recorded some: the native assimilator), this process left
		// some, or once every idleDBLook.
		n, err := advance.IntakeSpool(ctx, e.Chains())
		// An entry that cannot be read now (reported, looked at again next
		// pass) holds back no other chain's next step.
		if err != nil || n > 0 || asked || e.pendingHint.Swap(false) || time.Since(lastDB) >= idleDBLook {
			m, cerr := e.CreatePending(ctx)
			n += m
			err = errors.Join(err, cerr)
			lastDB = time.Now()
		}
		if err != nil {
			lastDB = time.Time{} // look again at the next pass
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := poll
		if err != nil {
			wait = streak.fail(e.Log, "creating pending steps; trying again shortly", err, busyWait(poll))
		} else {
			streak.ok(e.Log, "creating pending steps")
			switch {
			case n >= creatorBatch:
				continue // more are waiting already
			case n > 0:
				// Hook calls are coming: waiting longer after a busy pass lets
				// the steps of many calls share one create_work run.
				wait = busyWait(poll)
			}
		}
		if !e.pause(ctx, poll, wait) {
			return nil
		}
	}
}

// pause waits until the next pass is due, or a lone hook call waits for
// one (spool.AskPass), looking every poll; false when ctx ended.
func (e *Engine) pause(ctx context.Context, poll, wait time.Duration) bool {
	for end := time.Now().Add(wait); ; {
		d := min(poll, time.Until(end))
		if d <= 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
		}
		if spool.PassAsked(e.Root) {
			return true
		}
	}
}

// busyWait is the pause after a pass that found work.
func busyWait(poll time.Duration) time.Duration { return 5 * poll }

// CreatePending creates the work units of the pending steps, many per
// create_work run, and returns how many steps it handled. The caller holds
// the creator lock. A step whose work unit cannot be created fails its
// chain, as a hook creating it would have; the rest of its batch is
// created in a few more runs (settleFailed), so one bad step holds back no
// other chain.
func (e *Engine) CreatePending(ctx context.Context) (int, error) {
	total := 0
	for {
		ps, err := e.db.PendingSteps(ctx, creatorBatch)
		if err != nil {
			return total, err
		}
		if len(ps) == 0 {
			return total, nil
		}
		// create_work takes the application and the work parameters once
		// per run: one run per distinct set.
		var order []string
		byParams := map[string][]stepJob{}
		for _, p := range ps {
			if _, ok := byParams[p.Chain.Params]; !ok {
				order = append(order, p.Chain.Params)
			}
			byParams[p.Chain.Params] = append(byParams[p.Chain.Params], stepJob{chain: p.Chain, step: p.Step})
		}
		for _, key := range order {
			if err := e.createBatch(ctx, key, byParams[key]); err != nil {
				return total, err
			}
		}
		total += len(ps)
		e.Log.Info("next steps created", "work_units", len(ps))
		if len(ps) < creatorBatch {
			return total, nil
		}
	}
}

// createBatch creates jobs sharing one set of work parameters; it returns
// an error only when the state database failed.
func (e *Engine) createBatch(ctx context.Context, paramsJSON string, jobs []stepJob) error {
	var params boinc.WorkParams
	if err := json.Unmarshal([]byte(paramsJSON), &params); err != nil {
		for _, j := range jobs {
			if err := e.db.FailChain(ctx, j.chain.ID, j.step.Step, fmt.Sprintf("bad stored parameters: %v", err)); err != nil {
				return err
			}
		}
		return nil
	}
	return e.settleFailed(ctx, params, jobs, e.createSteps(ctx, params, jobs))
}

// settleFailed finishes jobs whose run ended with err (nil: all created).
// A failed run of many jobs is settled in few more runs, not one per job:
// the work units BOINC holds already (created by a creator stopped before
// it recorded them, or by the failed run itself, which real create_work
// inserts in chunks) are recorded as queued after one batched look-up;
// the rest are created again together, and split in halves while they
// fail, so one bad step costs O(log n) runs. A job that fails alone fails
// its chain. It returns an error only when the state database failed, a
// disk failed, a database said to try again (retryLater) or ctx ended.
func (e *Engine) settleFailed(ctx context.Context, params boinc.WorkParams, jobs []stepJob, err error) error {
	if err == nil || ctx.Err() != nil {
		return ctx.Err()
	}
	if isDiskError(err) || retryLater(err) {
		return err // the pass fails and is tried again; no chain is at fault
	}
	if len(jobs) == 1 {
		j := jobs[0]
		if done, serr := e.alreadyCreated(ctx, j.step.WU, err); done || serr != nil {
			return serr
		}
		e.Log.Error("creating the next step failed", "wu", j.step.WU, "err", err)
		return e.db.FailChain(ctx, j.chain.ID, j.step.Step, fmt.Sprintf("creating work unit %s: %v", j.step.WU, err))
	}
	e.Log.Warn("creating a batch of next steps failed; settling it in smaller runs", "work_units", len(jobs), "err", err)
	rest, found, serr := e.queueExisting(ctx, jobs)
	if serr != nil {
		return serr
	}
	if len(rest) == 0 {
		return nil
	}
	if found > 0 {
		// The work units found may have been the batch's only fault.
		return e.settleFailed(ctx, params, rest, e.createSteps(ctx, params, rest))
	}
	half := len(rest) / 2
	for _, part := range [][]stepJob{rest[:half], rest[half:]} {
		if err := e.settleFailed(ctx, params, part, e.createSteps(ctx, params, part)); err != nil {
			return err
		}
	}
	return nil
}

// queueExisting records as queued the jobs whose work units BOINC holds
// already, looked up by name in batches, and returns the others and how
// many it found. Without BOINC's database it finds none: the failed jobs
// are split down to single ones then, whose duplicate is told by
// create_work's message (alreadyCreated).
func (e *Engine) queueExisting(ctx context.Context, jobs []stepJob) (rest []stepJob, found int, err error) {
	bdb, err := e.boincDB(ctx)
	var ids map[string]int64
	if err == nil {
		names := make([]string, len(jobs))
		for i, j := range jobs {
			names[i] = j.step.WU
		}
		ids, err = bdb.WUIDs(ctx, names)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		e.Log.Warn("cannot look up which work units of a failed batch BOINC holds already; splitting the batch", "err", err)
		return jobs, 0, nil
	}
	var existing []string
	for _, j := range jobs {
		if _, ok := ids[j.step.WU]; ok {
			existing = append(existing, j.step.WU)
		} else {
			rest = append(rest, j)
		}
	}
	if len(existing) > 0 {
		e.Log.Warn("work units exist in BOINC already (created before the creator stopped, or by the failed run); recorded as created", "work_units", len(existing), "first", existing[0])
		if err := e.db.QueuePending(ctx, existing...); err != nil {
			return nil, 0, err
		}
		if err := e.cancelStranded(ctx, existing); err != nil {
			return nil, 0, err
		}
	}
	return rest, len(existing), nil
}

// alreadyCreated handles a step whose create_work run failed because BOINC
// holds its work unit already: a creator stopped between create_work and
// recording the step as queued (a crash, a kill) leaves it pending, and
// the next pass finds it created. It is recorded as queued then.
func (e *Engine) alreadyCreated(ctx context.Context, wu string, err error) (bool, error) {
	if !boinc.DuplicateWU(err, wu) {
		return false, nil
	}
	e.Log.Warn("work unit exists in BOINC already (created before the creator stopped); recorded as created", "wu", wu)
	if err := e.db.QueuePending(ctx, wu); err != nil {
		return true, err
	}
	return true, e.cancelStranded(ctx, []string{wu})
}

// pendingState is the state the hook records a next step in.
const pendingState = store.StatePending

// spoolWaiting tells whether some hook call waits in the spool.
func (e *Engine) spoolWaiting() (bool, error) {
	names, err := spool.Entries(e.Root)
	return len(names) > 0, err
}
