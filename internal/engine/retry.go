package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
)

// Defaults of the chain-life settings of rboinc.json.
const (
	defaultMaxStepAttempts = 3
	defaultRetryBackoff    = 5 * time.Second
	maxRetryBackoff        = time.Hour
)

// maxAttempts is how many work units a chain's step may take.
func (e *Engine) maxAttempts(c store.Chain) int {
	if c.MaxAttempts > 0 {
		return c.MaxAttempts
	}
	if e.Cfg.MaxStepAttempts > 0 {
		return e.Cfg.MaxStepAttempts
	}
	return defaultMaxStepAttempts
}

// retryWait is the back-off before a step's next attempt: retry_backoff,
// doubling per attempt made.
func (e *Engine) retryWait(attempts int) time.Duration {
	d := defaultRetryBackoff
	if e.Cfg.RetryBackoff > 0 {
		d = time.Duration(e.Cfg.RetryBackoff * float64(time.Second))
	}
	for i := 1; i < attempts && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, maxRetryBackoff)
}

// failureReason words BOINC's giving up on a work unit: the error mask in
// words and, from BOINC's database when it can be read, what the failing
// result reported.
func (e *Engine) failureReason(ctx context.Context, call boinc.HookCall) string {
	reason := fmt.Sprintf("work unit %s failed in BOINC (error mask %d: %s)", call.WUName, call.ErrorMask, boincdb.ErrorMaskText(call.ErrorMask))
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return reason
	}
	f, found, err := bdb.FailureDetail(ctx, call.WUName)
	if err != nil || !found {
		return reason
	}
	reason += fmt.Sprintf("; its last error result exited with status %d", f.ExitStatus)
	// An output the client found absent or too big fails a result whose
	// application exited with 0: the exit status alone told nothing.
	for i, o := range f.Outputs {
		if i == 0 {
			reason += ", but its "
		} else {
			reason += " and its "
		}
		reason += o.Text()
	}
	if f.StderrTail != "" {
		reason += ", stderr: " + f.StderrTail
	}
	return reason
}

// stepFailed handles BOINC giving up on a step's work unit: the step is
// made again from the same inputs, as a new work unit after a back-off,
// while it has attempts left and the chain runs (and the work unit was not
// cancelled by rboinc); otherwise the chain fails with the reason.
func (e *Engine) stepFailed(ctx context.Context, c store.Chain, s store.Step, call boinc.HookCall) error {
	if s.State == "done" || s.State == "failed" {
		return nil // a second call for the same work unit
	}
	if c.State == "running" || c.State == "stopped" {
		// A stopped chain's work unit ran on in BOINC: its step, made
		// again, waits for -resume.
		if handled, err := e.downloadFailed(ctx, c, s, call); handled || err != nil {
			return err
		}
	}
	reason := e.failureReason(ctx, call)
	max := e.maxAttempts(c)
	if c.State == "running" && s.Attempts < max {
		wait := e.retryWait(s.Attempts)
		why := fmt.Sprintf("step %d attempt %d of %d failed: %s; retrying", s.Step, s.Attempts, max, reason)
		newWU, ok, err := e.remake(ctx, c, s, call.WUName, why, wait, e.db.RetryStep)
		if err == nil && ok {
			e.Log.Warn("step failed; made again", "chain", c.Name, "group", c.Group, "step", s.Step, "attempt", s.Attempts+1,
				"of", max, "new_wu", newWU, "in", wait, "reason", reason)
		}
		return err
	}
	if c.State == "running" {
		reason = fmt.Sprintf("%s (attempt %d of %d)", reason, s.Attempts, max)
	}
	if c.State == "aborted" {
		// The user's abort cancelled the work unit: no failure, the
		// chain stays aborted (FailChain only closes the step).
		e.Log.Info("chain aborted; its work unit ended in BOINC", "chain", c.Name, "group", c.Group, "wu", call.WUName)
	} else {
		e.Log.Warn("chain failed", "chain", c.Name, "group", c.Group, "reason", reason)
	}
	return e.db.FailChain(ctx, c.ID, s.Step, reason)
}

// remake makes a step whose work unit oldWU BOINC gave up on wait for a
// new work unit (retry: store.RetryStep or RemakeStep) after wait; ok is
// false when the step had moved on already.
func (e *Engine) remake(ctx context.Context, c store.Chain, s store.Step, oldWU, why string, wait time.Duration,
	retry func(ctx context.Context, c store.Chain, step int, oldWU, newWU, reason string, notBefore int64) (bool, error)) (string, bool, error) {
	for range 20 {
		newWU := naming.Format(c.Name, c.User, c.Group, s.Step, c.NSteps, naming.Tag(rand.IntN(10000)))
		if newWU == oldWU {
			continue
		}
		ok, err := retry(ctx, c, s.Step, oldWU, newWU, why, time.Now().Add(wait).Unix())
		if errors.Is(err, store.ErrExists) {
			continue // the tag was used before: another
		}
		if err != nil {
			return "", false, err
		}
		if ok {
			e.pendingHint.Store(true)
		}
		return newWU, ok, nil
	}
	return "", false, fmt.Errorf("no free work-unit name for step %d of chain %s", s.Step, c.Name)
}
