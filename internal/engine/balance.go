package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/rboinc/rboinc/internal/store"
)

// Defaults of the original's load balancing.
const (
	defaultCatchupSteps    = 2
	defaultCatchupPriority = 2000
	defaultLateAfter       = 48 * time.Hour
	latePriorityBoost      = 1000
)

// catchup returns the priority of the next work unit of chains held back
// in their group: for each step job whose chain is more than catchup_steps
// behind the group's most advanced running chain, catchup_priority.
func (e *Engine) catchup(ctx context.Context, jobs []stepJob) (map[int]int, error) {
	steps, prio := e.Cfg.CatchupSteps, e.Cfg.CatchupPriority
	if steps <= 0 {
		steps = defaultCatchupSteps
	}
	if prio == 0 {
		prio = defaultCatchupPriority
	}
	var chains []store.Chain
	for _, j := range jobs {
		chains = append(chains, j.chain)
	}
	leads, err := e.db.GroupLeads(ctx, chains)
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for i, j := range jobs {
		lead := leads[[2]string{fmt.Sprint(j.chain.UserID), j.chain.Group}]
		if lead-j.step.Step > steps {
			out[i] = prio
		}
	}
	return out, nil
}

// DuplicateLate gives every step BOINC has held longer than late_after
// (48 h by default) one more replica, its priority raised by 1000, once;
// it needs BOINC's database, and says so when it cannot have it.
func (e *Engine) DuplicateLate(ctx context.Context) (int, error) {
	return e.DuplicateLateAfter(ctx, 0)
}

// DuplicateLateAfter is DuplicateLate for the steps BOINC has held longer
// than after (0: late_after), as `rboinc-server late` asks.
func (e *Engine) DuplicateLateAfter(ctx context.Context, after time.Duration) (int, error) {
	if after <= 0 {
		after = defaultLateAfter
		if e.Cfg.LateAfterHours > 0 {
			after = time.Duration(e.Cfg.LateAfterHours * float64(time.Hour))
		}
	}
	wus, err := e.db.LateSteps(ctx, time.Now().Add(-after).Unix(), 500)
	if err != nil || len(wus) == 0 {
		return 0, err
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return 0, fmt.Errorf("late steps cannot get a replica without BOINC's database: %w", err)
	}
	ids, err := bdb.WUIDs(ctx, wus)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, wu := range wus {
		id, ok := ids[wu]
		if ok {
			added, err := bdb.AddReplica(ctx, id)
			if err != nil {
				return n, err
			}
			if added {
				if err := bdb.RaisePriority(ctx, id, latePriorityBoost); err != nil {
					return n, err
				}
				n++
				e.Log.Info("late step given one more replica", "wu", wu)
			}
		}
		if err := e.db.MarkLate(ctx, wu); err != nil {
			return n, err
		}
	}
	return n, nil
}

// lateEvery is how often the daemons look for late steps.
const lateEvery = time.Minute

// maybeDuplicateLate runs DuplicateLate at most once every lateEvery (the
// creator and the native assimilator call it at every pass).
func (e *Engine) maybeDuplicateLate(ctx context.Context) {
	now := time.Now().UnixNano()
	last := e.lastLate.Load()
	if last != 0 && time.Duration(now-last) < lateEvery || !e.lastLate.CompareAndSwap(last, now) {
		return
	}
	if n, err := e.DuplicateLate(ctx); err != nil {
		if ctx.Err() == nil { // a shutdown's cut is no failure
			e.Log.Warn("late steps", "err", err)
		}
	} else if n > 0 {
		e.Log.Info("late steps given one more replica", "count", n)
	}
}
