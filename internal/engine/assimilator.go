package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/rboinc/rboinc/internal/ctxsleep"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
)

// Assimilator is rboinc's own BOINC assimilator: instead of one hook
// process per work unit, it reads the work units ready for assimilation
// from BOINC's database in batches, advances their chains as the hook does,
// makes what it took durable once per batch, has the next steps created
// (one create_work --stdin per batch), and only then marks the work units
// assimilated. Every step is idempotent by work unit: after a crash at any
// point, the next pass does again what was not marked, and a step recorded
// already is not recorded twice.
type Assimilator struct {
	E     *Engine
	BDB   *boincdb.DB
	Apps  []string // BOINC app names; empty: the apps of rboinc's queues
	Batch int      // work units per query; default 500
	Log   *slog.Logger

	// deferred are work units left for a later pass (no canonical result,
	// outputs missing), with when to try again.
	deferred map[int64]deferral
}

type deferral struct {
	next   time.Time
	wait   time.Duration
	reason string
}

// assimBatch is the default number of work units read per query.
const assimBatch = 500

// OpenBoincDB opens the BOINC database of the engine's project (config.xml's
// database; the stand-in's own file) and checks that it has what rboinc
// reads.
func (e *Engine) OpenBoincDB(ctx context.Context) (*boincdb.DB, error) {
	t, err := boincdb.ForProject(e.Proj, e.Cfg.Simulated)
	if err != nil {
		return nil, err
	}
	db, err := boincdb.Open(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := db.Check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// appIDs resolves the apps to assimilate. Explicit apps must exist; apps
// taken from the queues may not be in BOINC's app table yet (no work
// created for them), and are skipped until they are.
func (a *Assimilator) appIDs(ctx context.Context) ([]int64, error) {
	names, explicit := a.Apps, len(a.Apps) > 0
	if !explicit {
		qs, _ := a.E.Queues.List()
		seen := map[string]bool{}
		for _, q := range qs {
			if !seen[q.Application] {
				seen[q.Application] = true
				names = append(names, q.Application)
			}
		}
	}
	ids, err := a.BDB.AppIDs(ctx, names)
	if err != nil && explicit {
		return nil, err
	}
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		out = append(out, id)
	}
	return out, nil
}

// Pass assimilates every work unit ready now and returns how many it
// assimilated. An error means the databases or the disk failed; what was
// done before it is durable and marked.
func (a *Assimilator) Pass(ctx context.Context) (int, error) {
	if a.deferred == nil {
		a.deferred = map[int64]deferral{}
	}
	if a.Log == nil {
		a.Log = a.E.Log
	}
	batch := a.Batch
	if batch <= 0 {
		batch = assimBatch
	}
	ids, err := a.appIDs(ctx)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	total := 0
	wus, err := a.BDB.ReadyWUs(ctx, ids, 0, batch)
	if err != nil {
		return 0, err
	}
	pre := a.pretake(ctx, wus)
	for len(wus) > 0 && ctx.Err() == nil {
		next := a.readNext(ctx, ids, wus, batch)
		n, err := a.assimilate(ctx, wus, pre, next.takeAhead)
		pre.finish()
		total += n
		nextWUs, nextPre, nextErr := next.wait()
		if err != nil || nextErr != nil {
			nextPre.finish()
			return total, errors.Join(err, nextErr)
		}
		wus, pre = nextWUs, nextPre
	}
	pre.finish()
	a.E.maybeDuplicateLate(ctx)
	// Steps that came due meanwhile (retries after their back-off) are
	// created here too: a project may run no creator daemon.
	if more, err := a.E.db.AnyPending(ctx); err == nil && more {
		if err := a.E.kickCreator(ctx); err != nil {
			a.Log.Error("creating due steps failed; they stay pending and are retried", "err", err)
		}
	}
	return total, ctx.Err()
}

// nextBatch is the batch after the one being assimilated: read from
// BOINC's database beside that one's records, its outputs taken beside
// that one's tail (durability, creation of the next steps, marking),
// where one core would otherwise wait on the other.
type nextBatch struct {
	a       *Assimilator
	ctx     context.Context
	fetched chan struct{}
	wus     []boincdb.ReadyWU
	err     error
	once    sync.Once
	pre     *pretakes
}

// readNext starts reading the batch after wus, unless wus was the last.
func (a *Assimilator) readNext(ctx context.Context, ids []int64, wus []boincdb.ReadyWU, batch int) *nextBatch {
	nb := &nextBatch{a: a, ctx: ctx, fetched: make(chan struct{})}
	if len(wus) < batch {
		close(nb.fetched)
		return nb
	}
	after := wus[len(wus)-1].ID
	go func() {
		defer close(nb.fetched)
		nb.wus, nb.err = a.BDB.ReadyWUs(ctx, ids, after, batch)
	}()
	return nb
}

// takeAhead starts taking the next batch's outputs (once; on the
// goroutine that records, which owns the deferrals pretake reads).
func (nb *nextBatch) takeAhead() {
	nb.once.Do(func() {
		<-nb.fetched
		if nb.err == nil && nb.ctx.Err() == nil {
			nb.pre = nb.a.pretake(nb.ctx, nb.wus)
		}
	})
}

// wait is the next batch and its takes, once read.
func (nb *nextBatch) wait() ([]boincdb.ReadyWU, *pretakes, error) {
	nb.takeAhead()
	return nb.wus, nb.pre, nb.err
}

// assimilate hands one batch of ready work units to advance.Run (their
// records, one durability point, the next steps' creation), then marks
// those it handled assimilated. pre is its outputs taken ahead; recorded
// is called once its records are written.
func (a *Assimilator) assimilate(ctx context.Context, wus []boincdb.ReadyWU, pre *pretakes, recorded func()) (int, error) {
	t0 := time.Now()
	b := advance.Batch{Door: advance.AssimilatorDoor, Recorded: recorded}
	ids := make([]int64, 0, len(wus))
	for _, w := range wus {
		ids = append(ids, w.ID)
		b.Items = append(b.Items, &advance.Item{Call: boinc.HookCall{WUName: w.Name}, Prepare: func(ctx context.Context, it *advance.Item) error {
			return a.prepare(ctx, w, pre, it)
		}})
	}
	failure := advance.Run(ctx, a.E.Chains(), b)
	var done []int64
	for i, it := range b.Items {
		if it.Fate != advance.Recorded && it.Fate != advance.SetAside {
			continue
		}
		if _, ok := a.deferred[ids[i]]; ok {
			a.Log.Info("work unit assimilated after all", "wu", it.Call.WUName)
			delete(a.deferred, ids[i])
		}
		done = append(done, ids[i])
	}
	if len(done) == 0 {
		return 0, failure
	}
	tDurable := time.Now()
	// BOINC deletes the outputs once the work units are marked: Run made
	// what was recorded durable first.
	if err := a.BDB.MarkAssimilated(context.WithoutCancel(ctx), done); err != nil {
		return 0, errors.Join(failure, err)
	}
	a.Log.Debug("batch assimilated", "work_units", len(done), "record_sync_and_create_ms", ms(tDurable.Sub(t0)),
		"mark_ms", ms(time.Since(tDurable)))
	return len(done), failure
}

// prepare makes the item of one ready work unit as the hook would be
// called for it, just before its record: a work unit whose retry is not
// due, or whose outputs are not there yet, is left for a later pass.
func (a *Assimilator) prepare(ctx context.Context, w boincdb.ReadyWU, pre *pretakes, it *advance.Item) error {
	if d, ok := a.deferred[w.ID]; ok && time.Now().Before(d.next) {
		return advance.ErrLater
	}
	wo := pre.outputs(w.ID)
	call, err := a.call(ctx, w, wo)
	var later *deferError
	if errors.As(err, &later) {
		a.deferWU(w, later.reason)
		return advance.ErrLater
	}
	if err != nil {
		return err
	}
	it.Call = call
	if wo != nil {
		it.Pretaken = wo
	}
	return nil
}

// deferError is a work unit that cannot be assimilated now but may be
// later (its outputs not there yet, its canonical result not found).
type deferError struct{ reason string }

func (d *deferError) Error() string { return d.reason }

// deferWU leaves a work unit for a later pass, waiting longer each time,
// and says so in the log when the reason is new.
func (a *Assimilator) deferWU(w boincdb.ReadyWU, reason string) {
	d := a.deferred[w.ID]
	d.wait = min(max(2*d.wait, 10*time.Second), 10*time.Minute)
	d.next = time.Now().Add(d.wait)
	if d.reason != reason {
		a.Log.Error("work unit left for a retry", "wu", w.Name, "wu_id", w.ID, "reason", reason, "retry_in", d.wait)
	}
	d.reason = reason
	a.deferred[w.ID] = d
}

// call is the hook call for one ready work unit; wo, when not nil, is its
// outputs read and taken ahead. A *deferError leaves it for later.
func (a *Assimilator) call(ctx context.Context, w boincdb.ReadyWU, wo *wuOutputs) (boinc.HookCall, error) {
	e := a.E
	call := boinc.HookCall{WUName: w.Name, WUID: w.ID, Batch: w.Batch}
	if w.ErrorMask != 0 {
		call.Error, call.ErrorMask = true, w.ErrorMask
	} else {
		if w.Canonical == nil {
			return call, &deferError{fmt.Sprintf("no canonical result (canonical_resultid %d) although BOINC made the work unit ready for assimilation", w.CanonicalResultID)}
		}
		var outs []boincdb.OutputFile
		var err error
		if wo != nil {
			outs, err = wo.outs, wo.parseErr
		} else {
			outs, err = boincdb.OutputFiles(w.Canonical.XMLDocIn)
		}
		if err != nil {
			return call, &deferError{fmt.Sprintf("canonical result %s: %v", w.Canonical.Name, err)}
		}
		var missing []string
		for _, o := range outs {
			path := e.Proj.UploadPath(o.Name)
			call.Files = append(call.Files, path)
			if o.Optional {
				continue
			}
			gone, known := wo.missing(path)
			if !known {
				_, err := os.Stat(path)
				gone = err != nil
			}
			if gone {
				missing = append(missing, path)
			}
		}
		if len(missing) > 0 && a.waitsForOutputs(ctx, w.Name) {
			return call, &deferError{fmt.Sprintf("output files of canonical result %s missing: %s", w.Canonical.Name, strings.Join(missing, ", "))}
		}
	}
	return call, nil
}

// waitsForOutputs tells whether a work unit's missing outputs are worth
// waiting for: it is a step of rboinc's not recorded yet. A step recorded
// already (a pass stopped after recording it, before marking it) has its
// outputs in rboinc's hands; a work unit that is no step is the hook
// logic's to report.
func (a *Assimilator) waitsForOutputs(ctx context.Context, wu string) bool {
	_, s, err := a.E.db.StepByWU(ctx, wu)
	return err == nil && s.State != "done" && s.State != "failed"
}

// AssimilatorOptions are the daemon's, as BOINC's assimilators take them.
type AssimilatorOptions struct {
	Apps    []string
	Batch   int
	OnePass bool          // --one_pass: one enumeration, then exit
	Sleep   time.Duration // --sleep_interval: the wait when nothing was ready
	Stop    func() bool   // BOINC's stop_daemons trigger file
}

// RunAssimilator is the daemon: passes until ctx ends or Stop says so,
// sleeping when nothing was ready. Failures of BOINC's database or of the
// disk are logged and retried with growing waits; with OnePass the first
// is returned.
func (e *Engine) RunAssimilator(ctx context.Context, o AssimilatorOptions) error {
	unlock, err := lockAssimilator(e.Root)
	if err != nil {
		return err
	}
	defer unlock()
	if o.Sleep <= 0 {
		o.Sleep = 5 * time.Second
	}
	var streak failStreak
	var a *Assimilator
	defer func() {
		if a != nil {
			a.BDB.Close()
		}
	}()
	for ctx.Err() == nil {
		if o.Stop != nil && o.Stop() {
			e.Log.Info("stopping: BOINC's stop_daemons trigger file is present")
			return nil
		}
		if a == nil {
			bdb, err := e.OpenBoincDB(ctx)
			if err != nil {
				if o.OnePass {
					return err
				}
				if !ctxsleep.Sleep(ctx, streak.fail(e.Log, "cannot use BOINC's database; work units stay ready and are assimilated once it answers", err, time.Second)) {
					return nil
				}
				continue
			}
			a = &Assimilator{E: e, BDB: bdb, Apps: o.Apps, Batch: o.Batch, Log: e.Log}
			if _, err := a.appIDs(ctx); err != nil {
				return err // an --app BOINC does not know: a configuration error
			}
		}
		n, err := a.Pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if o.OnePass {
				return err
			}
			if !ctxsleep.Sleep(ctx, streak.fail(e.Log, "assimilation pass failed; unmarked work units are done again", err, time.Second)) {
				return nil
			}
			continue
		}
		streak.ok(e.Log, "assimilation")
		if n > 0 {
			e.Log.Info("work units assimilated", "count", n)
		}
		if o.OnePass {
			return nil
		}
		if n == 0 && !ctxsleep.Sleep(ctx, o.Sleep) {
			return nil
		}
	}
	return nil
}

// AssimilatorLockName is the native assimilator's lock file in the server
// root: one runs at a time, whatever apps it is given.
const AssimilatorLockName = "assimilator.lock"

func lockAssimilator(root string) (func(), error) {
	path := filepath.Join(root, AssimilatorLockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another rboinc assimilator is running on %s (it holds %s)", root, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
