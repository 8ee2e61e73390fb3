package engine

import (
	"context"
	"time"

	"github.com/rboinc/rboinc/internal/store"
)

// SetInlineStagedHook makes f run as each inline content is staged, until
// the returned function is called.
func SetInlineStagedHook(f func(e *Engine, sum string)) (restore func()) {
	old := inlineStaged
	inlineStaged = f
	return func() { inlineStaged = old }
}

// SetNotifyRetry sets the wait after a first failed notification.
func SetNotifyRetry(d time.Duration) (restore func()) {
	old := notifyFirstRetry
	notifyFirstRetry = d
	return func() { notifyFirstRetry = old }
}

// SetIdleDBLook sets how often an idle creator asks the database for
// pending steps nobody told it about.
func SetIdleDBLook(d time.Duration) (restore func()) {
	old := idleDBLook
	idleDBLook = d
	return func() { idleDBLook = old }
}

// InputChecks runs the creator's input checks, remembering between them.
type InputChecks struct{ st inputCheckState }

func (c *InputChecks) Run(ctx context.Context, e *Engine) { e.runInputCheck(ctx, &c.st) }

// State is the engine's state database, for tests that set up or look at
// what no engine method shows.
func (e *Engine) State() *store.DB { return e.db }

// SetOrphanScanLimit sets how many result files one collection pass looks
// at, for the duration of test t.
func SetOrphanScanLimit(t interface{ Cleanup(func()) }, n int) {
	old := orphanScanLimit
	orphanScanLimit = n
	t.Cleanup(func() { orphanScanLimit = old })
}

// SetUnindexedMinAge sets how old a pool file without a row must be
// before collection removes it, for the duration of test t.
func SetUnindexedMinAge(t interface{ Cleanup(func()) }, d time.Duration) {
	old := unindexedMinAge.Swap(int64(d))
	t.Cleanup(func() { unindexedMinAge.Store(old) })
}

// SetAfterCreateSteps makes f run, once, between the creation of steps'
// work units in BOINC and their recording. Set before e's creator runs.
func (e *Engine) SetAfterCreateSteps(f func()) {
	e.afterCreateSteps = func() {
		e.afterCreateSteps = nil
		f()
	}
}

// SetAfterBeginBatch makes f run, once, between a batch submission's record
// of its batch and that of its chains.
func (e *Engine) SetAfterBeginBatch(f func(store.Batch)) {
	e.afterBeginBatch = func(b store.Batch) {
		e.afterBeginBatch = nil
		f(b)
	}
}

// PassAround is one pass of a over the work units ready now, with between
// run after their outputs were taken ahead and before their records (as
// another host's assimilator may record them meanwhile).
func (a *Assimilator) PassAround(ctx context.Context, between func()) (int, error) {
	if a.deferred == nil {
		a.deferred = map[int64]deferral{}
	}
	if a.Log == nil {
		a.Log = a.E.Log
	}
	ids, err := a.appIDs(ctx)
	if err != nil {
		return 0, err
	}
	wus, err := a.BDB.ReadyWUs(ctx, ids, 0, assimBatch)
	if err != nil {
		return 0, err
	}
	pre := a.pretake(ctx, wus)
	pre.wg.Wait()
	between()
	n, err := a.assimilate(ctx, wus, pre, nil)
	pre.finish()
	return n, err
}

// SetNotifyTiming sets how long a claimed batch of notifications is set
// aside and how long one call may take, for the duration of test t. Set
// before e's first notification (its HTTP client takes the timeout).
func SetNotifyTiming(t interface{ Cleanup(func()) }, lease int64, timeout time.Duration) {
	oldLease, oldTimeout := notifyLease, notifyTimeout
	notifyLease, notifyTimeout = lease, timeout
	t.Cleanup(func() { notifyLease, notifyTimeout = oldLease, oldTimeout })
}

// NotifyBatch is how many deliveries of one target a claim takes.
const NotifyBatch = notifyBatch

// SetUndoFaults makes the undo of a failed submission find BOINC's
// database (cancelling its work units) and the state's (marking its chains
// failed) away, each with its error if not nil, until restore.
func SetUndoFaults(cancelErr, failErr error) (restore func()) {
	oldCancel, oldFail := cancelWUsOf, failChainOf
	if cancelErr != nil {
		cancelWUsOf = func(*Engine, context.Context, []string) (int, error) { return 0, cancelErr }
	}
	if failErr != nil {
		failChainOf = func(*store.DB, context.Context, int64, int, string) error { return failErr }
	}
	return func() { cancelWUsOf, failChainOf = oldCancel, oldFail }
}
