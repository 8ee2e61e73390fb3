package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/store"
)

// maxDownloadRemakes bounds how often one step is made again, without
// counting as an attempt, because its inputs could not be downloaded: past
// it, such a failure counts as any other (a download that keeps failing
// with the inputs in place is not the inputs' fault).
const maxDownloadRemakes = 3

// downloadFailed handles a work unit BOINC gave up on because its
// volunteers could not download its inputs (every error result ended
// while downloading: see boincdb.DownloadFailed), a file taken away from
// download/ or replaced. rboinc's inputs are in its pool: it links them
// again and makes the step again as a new work unit, which does not count
// as one of the step's attempts. When the pool no longer has an input, the
// chain fails saying which. handled is false for any other failure, which
// stepFailed then treats as usual.
func (e *Engine) downloadFailed(ctx context.Context, c store.Chain, s store.Step, call boinc.HookCall) (handled bool, err error) {
	if call.ErrorMask&boincdb.ErrCancelled != 0 {
		return false, nil
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return false, nil // BOINC's view is needed to tell: an ordinary failure
	}
	all, n, err := bdb.DownloadFailed(ctx, call.WUName)
	if err != nil {
		e.Log.Warn("reading why a work unit failed", "wu", call.WUName, "err", err)
		return false, nil
	}
	if !all {
		return false, nil
	}
	prior, err := e.db.DownloadRemakes(ctx, c.ID, s.Step)
	if err != nil {
		return false, err
	}
	if prior >= maxDownloadRemakes {
		e.Log.Warn("a step's inputs failed to download again after being linked again; counted as a failed attempt",
			"chain", c.Name, "group", c.Group, "step", s.Step, "wu", call.WUName, "remakes", prior)
		return false, nil
	}
	bad, err := e.restoreInputs(ctx, bdb, call.WUName)
	if err != nil {
		e.Log.Warn("reading the inputs of a work unit whose download failed", "wu", call.WUName, "err", err)
		return false, nil
	}
	if len(bad) > 0 {
		var what []string
		for _, b := range bad {
			what = append(what, fmt.Sprintf("%s (%s)", b.File, b.Problem))
		}
		reason := fmt.Sprintf("%s: work unit %s: its volunteers could not download %s, and rboinc's pool no longer has the content to link it again",
			store.ReasonInputDownload, call.WUName, strings.Join(what, ", "))
		e.Log.Error("chain failed: an input is gone from download/ and from the pool", "chain", c.Name, "group", c.Group,
			"step", s.Step, "wu", call.WUName, "reason", reason)
		if err := e.db.AddCount(ctx, store.CountInputsUnrestorable, len(bad)); err != nil {
			e.Log.Warn("counting unrestorable inputs", "err", err)
		}
		return true, e.db.FailChain(ctx, c.ID, s.Step, reason)
	}
	again := "is made again"
	if c.State != "running" {
		again = "is made again when the chain is resumed" // the creator holds it
	}
	why := fmt.Sprintf("%s: work unit %s: %d of its results could not download its inputs; they are linked again from the pool and step %d %s (not counted as an attempt)",
		store.ReasonInputDownload, call.WUName, n, s.Step, again)
	newWU, ok, err := e.remake(ctx, c, s, call.WUName, why, 0, e.db.RemakeStep)
	if err == nil && ok {
		e.Log.Warn("a step's inputs could not be downloaded; linked again and made again", "chain", c.Name, "group", c.Group,
			"step", s.Step, "wu", call.WUName, "new_wu", newWU)
	}
	return true, err
}
