package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

// cancelWUs cancels work units in BOINC as its cancel_jobs does, through
// BOINC's database; it returns how many it cancelled, or why it could not.
func (e *Engine) cancelWUs(ctx context.Context, wus []string) (int, error) {
	if len(wus) == 0 {
		return 0, nil
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return 0, fmt.Errorf("cannot cancel the work units in BOINC (its database is not available: %w); they finish and are dropped", err)
	}
	ids, err := bdb.WUIDs(ctx, wus)
	if err != nil {
		return 0, err
	}
	list := make([]int64, 0, len(ids))
	for _, id := range ids {
		list = append(list, id)
	}
	return bdb.Cancel(ctx, list)
}

// cancelStranded cancels in BOINC those of wus, work units just made and
// recorded, whose chain was aborted or purged while they were being made
// (store.Stranded): the abort's own cancel came before they existed. A
// failure to cancel is logged; only the state database's is returned.
func (e *Engine) cancelStranded(ctx context.Context, wus []string) error {
	stranded, err := e.db.Stranded(ctx, wus)
	if err != nil || len(stranded) == 0 {
		return err
	}
	n, err := e.cancelWUs(ctx, stranded)
	if err != nil {
		e.Log.Error("cancelling work units made for chains aborted or purged meanwhile", "work_units", len(stranded), "first", stranded[0], "err", err)
		return nil
	}
	e.Log.Info("work units made while their chains were aborted or purged: cancelled in BOINC", "work_units", n, "first", stranded[0])
	return nil
}

// cancelNote cancels wus and words the outcome for the user: a note to
// append to the change's message and, when BOINC did not cancel them,
// failed (for CountResponse.Failed). The cause (BOINC's database, its
// address) goes to the log under a request id, not to the user.
func (e *Engine) cancelNote(ctx context.Context, wus []string) (note, failed string) {
	n, err := e.cancelWUs(ctx, wus)
	if err != nil {
		id := reqid.New()
		e.Log.Error("cancelling work units in BOINC", "request_id", id, "work_units", len(wus), "err", err)
		failed = fmt.Sprintf("BOINC did not cancel the %s in progress: they may still run (their results are dropped); the server's log says why under request %s", words.Count(len(wus), "work unit", "work units"), id)
		return "; but " + failed, failed
	}
	if n == 0 {
		return "", ""
	}
	return "; " + words.Count(n, "work unit", "work units") + " cancelled in BOINC", ""
}

// selected checks a chain reference and that it names chains of the user.
func (e *Engine) selected(ctx context.Context, u store.User, ref wire.ChainRef) error {
	if err := checkRef(ref.Group, ref.Name, true); err != nil {
		return err
	}
	chains, err := e.db.Chains(ctx, u.ID, ref.Group, ref.Name)
	if err != nil {
		return err
	}
	if len(chains) == 0 {
		return notFound(ref.Group, ref.Name)
	}
	return nil
}

// Abort stops chains and cancels their work units in BOINC: nothing more
// is computed for them; their outputs so far stay retrievable.
func (e *Engine) Abort(ctx context.Context, u store.User, ref wire.ChainRef) (wire.CountResponse, error) {
	if err := e.selected(ctx, u, ref); err != nil {
		return wire.CountResponse{}, err
	}
	chains, wus, err := e.db.Abort(ctx, u.ID, ref.Group, ref.Name, byUser("aborted", u))
	if err != nil {
		return wire.CountResponse{}, err
	}
	note, failed := e.cancelNote(ctx, wus)
	return wire.CountResponse{Count: len(chains), Message: fmt.Sprintf("aborted %s%s", words.Count(len(chains), "chain", "chains"), note), Failed: failed}, nil
}

// byUser is the reason of a chain its user stopped or aborted: who, and
// when (shown by -status and the status page until the chain resumes).
func byUser(what string, u store.User) string {
	return fmt.Sprintf("%s by %s at %s", what, u.Name, time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
}

// newWUNamer names a step's new work unit with a fresh tag.
func newWUNamer(c store.Chain, step int) string {
	tag := naming.Tag(rand.IntN(10000))
	for tag == c.Tag {
		tag = naming.Tag(rand.IntN(10000))
	}
	return naming.Format(c.Name, c.User, c.Group, step, c.NSteps, tag)
}

// Resume sets stopped, failed or aborted chains running again from their
// last good step; with files, that step reads them instead of the inputs
// it had (see resumeInputs).
func (e *Engine) Resume(ctx context.Context, u store.User, req wire.ResumeRequest) (_ wire.CountResponse, err error) {
	ref := req.ChainRef
	if err := e.selected(ctx, u, ref); err != nil {
		return wire.CountResponse{}, err
	}
	var in *store.NewInputs
	if len(req.Files) > 0 || req.Upload != "" {
		var brought fresh
		defer func() {
			if err != nil {
				e.dropFresh(context.WithoutCancel(ctx), brought.list())
			}
		}()
		if in, err = e.resumeInputs(ctx, u, req, &brought); err != nil {
			return wire.CountResponse{}, err
		}
	}
	done, refused, err := e.db.Resume(ctx, u.ID, ref.Group, ref.Name, newWUNamer, in)
	if err != nil {
		return wire.CountResponse{}, err
	}
	if in != nil && len(done) == 0 && len(refused) > 0 {
		// Nothing took the new contents: the request failed, and what it
		// brought into the pool goes.
		return wire.CountResponse{}, errf(KindBadRequest, "%s", countMessage("resumed", 0, "", refused))
	}
	if err := e.kickCreator(ctx); err != nil {
		e.Log.Error("creating resumed steps", "err", err)
	}
	return wire.CountResponse{Count: len(done), Message: countMessage("resumed", len(done), "", refused)}, nil
}

// MaxExtend bounds one -extend (the clients check the same wire limit).
const MaxExtend = wire.MaxChainSteps

// Extend adds k steps to chains, done ones included.
func (e *Engine) Extend(ctx context.Context, u store.User, req wire.ExtendRequest) (wire.CountResponse, error) {
	if req.Steps < 1 || req.Steps > MaxExtend {
		return wire.CountResponse{}, errf(KindBadRequest, "-extend takes a number of steps from 1 to %d, not %d", MaxExtend, req.Steps)
	}
	if err := e.selected(ctx, u, req.ChainRef); err != nil {
		return wire.CountResponse{}, err
	}
	done, refused, err := e.db.Extend(ctx, u.ID, req.Group, req.Name, req.Steps, newWUNamer)
	if err != nil {
		return wire.CountResponse{}, err
	}
	if err := e.kickCreator(ctx); err != nil {
		e.Log.Error("creating extended steps", "err", err)
	}
	return wire.CountResponse{Count: len(done), Message: countMessage("extended", len(done), " by "+words.Count(req.Steps, "step", "steps"), refused)}, nil
}

// countMessage words what a change did: "extended 2 chains by 3 steps",
// and which chains it could not change, and why.
func countMessage(verb string, n int, how string, refused []string) string {
	msg := verb + " " + words.Count(n, "chain", "chains") + how
	if len(refused) > 0 {
		msg += "; not: " + strings.Join(refused, "; ")
	}
	return msg
}
