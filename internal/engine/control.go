package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

func checkRef(group, name string, groupRequired bool) error {
	if group != "" || groupRequired {
		if err := naming.CheckIdent("group", group); err != nil {
			return errf(KindBadRequest, "%v", err)
		}
	}
	if name != "" {
		if err := naming.CheckIdent("name", name); err != nil {
			return errf(KindBadRequest, "%v", err)
		}
	}
	return nil
}

// Status reports the chains of a group (or one chain, or all of a user's
// chains when group is empty).
func (e *Engine) Status(ctx context.Context, u store.User, group, name string) (wire.StatusResponse, error) {
	var r wire.StatusResponse
	if err := checkRef(group, name, name != ""); err != nil {
		return r, err
	}
	chains, err := e.q.Chains(ctx, u.ID, group, name)
	if err != nil {
		return r, err
	}
	if len(chains) == 0 && group != "" {
		return r, notFound(group, name)
	}
	cur, err := e.q.CurrentSteps(ctx, u.ID, group, name)
	if err != nil {
		return r, err
	}
	r.Chains = make([]wire.ChainStatus, 0, len(chains))
	for _, c := range chains {
		cs := wire.ChainStatus{Group: c.Group, Name: c.Name, Queue: c.Queue, State: c.State, StepsDone: c.StepsDone, NumSteps: c.NSteps,
			Error: c.Error, Reason: c.Error}
		if s, ok := cur[c.ID]; ok {
			cs.WU, cs.Attempts = s.WU, s.Attempts
			if s.State == store.StateHeld {
				cs.WU = "" // a placeholder, not in BOINC
			}
			// A running chain whose step waits for its work unit (the
			// creator, a retry's back-off) is queued.
			if c.State == wire.StateRunning && (s.State == store.StatePending || s.State == "creating") {
				cs.State = wire.StateQueued
			}
			// As group_done judges a stopped chain (store.groupDoneEvent).
			if c.State == wire.StateStopped && (s.State == store.StateQueued || s.State == store.StatePending || s.State == "creating") {
				cs.StepInFlight = true
			}
		}
		r.Chains = append(r.Chains, cs)
	}
	if name == "" {
		bs, err := e.q.Batches(ctx, u.ID)
		if err != nil {
			return r, err
		}
		for _, b := range bs {
			if group == "" || b.Group == group {
				r.Batches = append(r.Batches, batchOf(b))
			}
		}
	}
	return r, nil
}

func notFound(group, name string) error {
	if name != "" {
		return errf(KindNotFound, "no chain %s in group %s", name, group)
	}
	return errf(KindNotFound, "no group %s", group)
}

// Stop stops the running chains of a group (or one chain): work units
// already in BOINC finish and their results arrive, but no next step is
// created.
func (e *Engine) Stop(ctx context.Context, u store.User, ref wire.ChainRef) (wire.CountResponse, error) {
	if err := checkRef(ref.Group, ref.Name, true); err != nil {
		return wire.CountResponse{}, err
	}
	chains, err := e.db.Chains(ctx, u.ID, ref.Group, ref.Name)
	if err != nil {
		return wire.CountResponse{}, err
	}
	if len(chains) == 0 {
		return wire.CountResponse{}, notFound(ref.Group, ref.Name)
	}
	n, err := e.db.Stop(ctx, u.ID, ref.Group, ref.Name, byUser("stopped", u))
	if err != nil {
		return wire.CountResponse{}, err
	}
	if ref.Cancel {
		wus, err := e.db.InFlight(ctx, u.ID, ref.Group, ref.Name)
		if err != nil {
			return wire.CountResponse{}, err
		}
		note, failed := e.cancelNote(ctx, wus)
		return wire.CountResponse{Count: n, Message: fmt.Sprintf("stopped %s%s", words.Count(n, "running chain", "running chains"), note), Failed: failed}, nil
	}
	return wire.CountResponse{Count: n, Message: fmt.Sprintf("stopped %s; work units already in BOINC will finish and can be retrieved", words.Count(n, "running chain", "running chains"))}, nil
}

// Purge removes a group (or one chain) from the server: its records and
// its results not yet retrieved. Work units still in BOINC finish, and
// their outputs are dropped.
func (e *Engine) Purge(ctx context.Context, u store.User, ref wire.ChainRef) (wire.CountResponse, error) {
	if err := checkRef(ref.Group, ref.Name, true); err != nil {
		return wire.CountResponse{}, err
	}
	// The result files of each piece of the purge go once it is
	// committed (see store.PurgeEach): a purge cut short leaves no file
	// of a purged chain behind.
	dir := e.resultsDir(toUpper(u.Name), ref.Group)
	chains, files, err := e.db.PurgeEach(ctx, u.ID, ref.Group, ref.Name, func(_ []store.Chain, files []string) {
		for _, f := range files {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
				e.Log.Warn("purge: removing result", "file", f, "err", err)
			}
		}
	})
	if err != nil {
		return wire.CountResponse{}, err
	}
	// What is in flight is cancelled: nobody will retrieve it. Read after
	// the purge, of its chains and those purged before: a purge sent
	// again (its answer lost, or 503 outcome_unknown after the commit)
	// finds no chain to purge, but cancels what the first left running.
	inflight, err := e.db.PurgedInFlight(ctx, u.ID, ref.Group, ref.Name)
	if err != nil {
		return wire.CountResponse{}, err
	}
	if len(chains) == 0 {
		if _, failed := e.cancelNote(ctx, inflight); failed != "" {
			e.Log.Warn("purge: the work units of chains purged before are not cancelled", "group", ref.Group, "work_units", len(inflight))
		}
		return wire.CountResponse{}, notFound(ref.Group, ref.Name)
	}
	os.Remove(dir) // only if empty
	note, failed := e.cancelNote(ctx, inflight)
	return wire.CountResponse{Count: len(chains), Message: fmt.Sprintf("purged %s and %s%s", words.Count(len(chains), "chain", "chains"), words.Count(len(files), "result file", "result files"), note), Failed: failed}, nil
}
