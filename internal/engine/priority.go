package engine

import (
	"context"
	"fmt"

	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

// SetPriority gives chains a new base priority, within the server's
// max_priority: their next steps' work units get it (less one per step, as
// at submission), and the work units BOINC holds now get it too, with
// their results not sent yet (what BOINC's feeder orders by).
func (e *Engine) SetPriority(ctx context.Context, u store.User, req wire.PriorityRequest) (wire.CountResponse, error) {
	if err := e.selected(ctx, u, req.ChainRef); err != nil {
		return wire.CountResponse{}, err
	}
	if err := e.checkPolicy(wire.Options{}, req.Priority); err != nil {
		return wire.CountResponse{}, err
	}
	n, held, err := e.db.SetPriority(ctx, u.ID, req.Group, req.Name, req.Priority)
	if err != nil {
		return wire.CountResponse{}, err
	}
	note := ""
	if changed, err := e.prioritizeWUs(ctx, held, req.Priority); err != nil {
		// The database's error (its address, account, file) is the
		// administrator's: the user gets the request id to ask with.
		id := reqid.New()
		e.Log.Warn("changing priorities in BOINC", "request_id", id, "err", err)
		note = fmt.Sprintf("; but the work units BOINC holds keep their priority (the next steps get the new one): the server's log says why under request %s", id)
	} else if changed > 0 {
		note = "; " + words.Count(changed, "work unit", "work units") + " changed in BOINC"
	}
	return wire.CountResponse{Count: n, Message: fmt.Sprintf("priority of %s set to %d%s", words.Count(n, "chain", "chains"), req.Priority, note)}, nil
}

// prioritizeWUs gives the work units BOINC holds for steps the priority
// base-step, in one change per distinct priority.
func (e *Engine) prioritizeWUs(ctx context.Context, held []store.HeldStep, base int) (int, error) {
	if len(held) == 0 {
		return 0, nil
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return 0, fmt.Errorf("BOINC's database is not available: %w", err)
	}
	wus := make([]string, len(held))
	for i, h := range held {
		wus[i] = h.WU
	}
	ids, err := bdb.WUIDs(ctx, wus)
	if err != nil {
		return 0, err
	}
	byPriority := map[int][]int64{}
	for _, h := range held {
		if id, ok := ids[h.WU]; ok {
			byPriority[base-h.Step] = append(byPriority[base-h.Step], id)
		}
	}
	total := 0
	for p, list := range byPriority {
		k, err := bdb.SetPriority(ctx, list, p)
		if err != nil {
			return total, err
		}
		total += k
	}
	return total, nil
}
