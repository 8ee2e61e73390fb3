package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
)

// recordStep is one finished work unit's record, for advance.Run (see
// chains.go), whatever door it came through: it takes the canonical
// outputs out of where they lie (BOINC deletes them once the door lets the
// work unit go), feeds chained outputs into the next step and records it
// as pending, or ends the chain. The next step's work unit is created by
// the creator (see creator.go). Recording one work unit twice records one
// next step. It returns an error only when BOINC should stop and retry
// later (the database or the disk failed), or an *advance.Unplaced;
// problems of one chain mark that chain failed instead.
//
// With taken nil the outputs are durable where they lie (the spool's);
// otherwise their writes are started, their paths listed in taken, and
// advance.Run makes them durable once for the batch. it.Pretaken, when
// set, holds outputs taken ahead.
func (e *Engine) recordStep(ctx context.Context, it *advance.Item, taken *advance.Taken) error {
	call := it.Call
	defer e.observe(ctx, store.LatencyHook, time.Now())
	if call.WUName == "" {
		e.Log.Warn("hook called without a work-unit name; nothing to do", "wu_id", call.WUID, "error_mask", call.ErrorMask)
		return nil
	}
	c, s, err := e.db.StepByWU(ctx, call.WUName)
	if errors.Is(err, store.ErrNotFound) {
		if earlier, eerr := e.db.EarlierAttempt(ctx, call.WUName); eerr != nil {
			return eerr
		} else if earlier {
			e.Log.Info("BOINC finished the work unit of an earlier attempt of a step; nothing to do", "wu", call.WUName)
			return nil
		}
		if w, perr := naming.ParseWU(call.WUName); perr == nil && !call.Error && len(call.Files) > 0 {
			// rboinc's shape, but no step of ours: BOINC deletes the outputs
			// once the hook returns, so they are kept for a person to look at.
			return advance.NoStep(w)
		}
		e.Log.Warn("BOINC finished a work unit rboinc did not create; ignored", "wu", call.WUName)
		return nil
	}
	if err != nil {
		return err
	}
	if up := foreignOutputs(call); up != nil {
		return up
	}
	if call.Error {
		return e.stepFailed(ctx, c, s, call)
	}
	if s.State == "done" || s.State == "failed" {
		if s.State == "done" && c.State != "purged" {
			if err := e.restoreResults(ctx, c, s.Step, call, taken); err != nil {
				return err
			}
		}
		return e.resumeNext(ctx, c, s.Step)
	}
	lay, err := e.layouts.parse(c.Layout)
	if err != nil {
		return fmt.Errorf("chain %s: bad layout: %w", c.Name, err)
	}
	var results []store.Result
	var pooled []store.PoolEntry // recorded with the step, in one transaction
	next := append([]string(nil), s.Inputs...)
	var missingChained []string
	produced := map[int]bool{}
	if c.State != "purged" {
		dir := e.resultsDir(c.User, c.Group)
		// Outputs taken ahead are in dir already: it is made only for a
		// take of the record's own.
		madeDir := false
		for _, path := range call.Files {
			o, err := naming.ParseOutput(filepath.Base(path))
			if err != nil {
				return err
			}
			lo, known := lay.output(o.Index)
			dst := filepath.Join(dir, naming.ResultFile(call.WUName, o.Index))
			var sum string
			var size int64
			var missing, took bool
			if it.Pretaken != nil {
				sum, size, missing, took = it.Pretaken.Took(path, dst)
				if wo, ok := it.Pretaken.(*wuOutputs); ok && took && taken != nil {
					if f := wo.hand(path, dst); f != nil {
						taken.Hold(dst, f)
					}
				}
			}
			if missing {
				continue // optional outputs may be missing; checked below
			}
			if !took {
				if _, err := os.Stat(path); err != nil {
					continue
				}
				if !madeDir {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						return err
					}
					madeDir = true
				}
				if taken != nil {
					sum, size, _, err = pool.TakeOutputStarted(path, dst)
				} else {
					sum, size, err = pool.TakeOutput(path, dst, false)
				}
				if err != nil {
					return err
				}
			}
			if taken != nil {
				taken.Paths = append(taken.Paths, dst)
			}
			produced[o.Index] = true
			results = append(results, store.Result{ChainID: c.ID, Step: s.Step, Index: o.Index, File: filepath.Base(dst), MD5: sum, Size: size})
			if known && lo.ChainPos >= 0 && lo.ChainPos < len(next) {
				if err := e.Pool.Adopt(dst, sum); err != nil {
					return err
				}
				pooled = append(pooled, store.PoolEntry{MD5: sum, Size: size})
				next[lo.ChainPos] = sum
			}
		}
		for _, lo := range lay.Outputs {
			if lo.ChainPos >= 0 && !produced[lo.Index] && !lo.Optional {
				missingChained = append(missingChained, fmt.Sprintf("%d (%s)", lo.Index, lo.OpenName))
			}
		}
	}
	var nextStep *store.Step
	if c.State != "purged" && len(missingChained) == 0 {
		// Held by the store unless the chain goes on now (see
		// CompleteStepPooling).
		nextStep = &store.Step{ChainID: c.ID, Step: s.Step + 1, WU: c.WU(s.Step + 1), State: pendingState, Inputs: next}
	}
	_, created, state, err := e.db.CompleteStepPooling(ctx, c, s.Step, results, pooled, nextStep)
	if err != nil {
		return err
	}
	if len(missingChained) > 0 && state == "running" && s.Step+1 < c.NSteps {
		reason := fmt.Sprintf("step %d produced no output %v, which the next step needs", s.Step, missingChained)
		return e.db.FailChain(ctx, c.ID, -1, reason)
	}
	e.Log.Info("step done", "wu", call.WUName, "results", len(results), "chain_state", state, "next_pending", created)
	return nil
}

// resumeNext finishes a call that a previous hook run could not: the next
// step was recorded but its work unit not created.
func (e *Engine) resumeNext(ctx context.Context, c store.Chain, step int) error {
	if c.State != "running" || step+1 >= c.NSteps {
		return nil
	}
	n, err := e.db.StepOf(ctx, c, step+1)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if n.State == "creating" { // recorded by a hook of an earlier version, which created it itself
		return e.startStep(ctx, c, n)
	}
	return nil // a pending step is the creator's
}

// startStep creates a step's work unit; if that fails the chain fails with
// the reason, since retrying the hook would not help.
func (e *Engine) startStep(ctx context.Context, c store.Chain, s store.Step) error {
	var params boinc.WorkParams
	if err := json.Unmarshal([]byte(c.Params), &params); err != nil {
		return e.db.FailChain(ctx, c.ID, s.Step, fmt.Sprintf("bad stored parameters: %v", err))
	}
	if err := e.createSteps(ctx, params, []stepJob{{chain: c, step: s}}); err != nil {
		if isDiskError(err) || retryLater(err) {
			return err // BOINC calls the hook again
		}
		if done, serr := e.alreadyCreated(ctx, s.WU, err); done || serr != nil {
			return serr
		}
		e.Log.Error("creating the next step failed", "wu", s.WU, "err", err)
		return e.db.FailChain(ctx, c.ID, s.Step, fmt.Sprintf("creating work unit %s: %v", s.WU, err))
	}
	e.Log.Info("next step created", "wu", s.WU)
	return nil
}
