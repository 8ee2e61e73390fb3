package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// gridWindow is how far back -gridstatus counts BOINC's work, as the
// original's 30 days.
const gridWindow = 30 * 24 * time.Hour

// boincDB is the engine's connection to BOINC's database, opened on first
// use and kept; a failure is returned (and tried again next time).
func (e *Engine) boincDB(ctx context.Context) (*boincdb.DB, error) {
	e.bdbMu.Lock()
	defer e.bdbMu.Unlock()
	if e.bdb != nil {
		return e.bdb, nil
	}
	db, err := e.OpenBoincDB(ctx)
	if err != nil {
		return nil, err
	}
	e.bdb = db
	return db, nil
}

// GridStatus reports a user's groups (or one): chains by state and what
// BOINC did with their work units of the last 30 days, read from BOINC's
// database in batches. Without BOINC's database the chain counts come
// alone, with the reason.
func (e *Engine) GridStatus(ctx context.Context, u store.User, group string) (wire.GridStatusResponse, error) {
	var r wire.GridStatusResponse
	if err := checkRef(group, "", false); err != nil {
		return r, err
	}
	chains, err := e.q.Chains(ctx, u.ID, group, "")
	if err != nil {
		return r, err
	}
	if len(chains) == 0 && group != "" {
		return r, notFound(group, "")
	}
	byGroup := map[string]*wire.GroupGrid{}
	for _, c := range chains {
		g := byGroup[c.Group]
		if g == nil {
			g = &wire.GroupGrid{Group: c.Group}
			byGroup[c.Group] = g
		}
		g.Count(c.State) // chains does not list purged ones
	}
	if bdb, err := e.boincDB(ctx); err != nil {
		r.BoincError = e.withoutBoincCounts(fmt.Errorf("BOINC's database is not available: %w", err))
	} else if wus, err := e.q.StepWUs(ctx, u.ID, group, time.Now().Add(-gridWindow).Unix()); err != nil {
		return r, err
	} else {
		for name, names := range wus {
			g := byGroup[name]
			if g == nil {
				continue
			}
			counts, err := bdb.Report(ctx, names)
			if err != nil {
				r.BoincError = e.withoutBoincCounts(fmt.Errorf("reading BOINC's database: %w", err))
				break
			}
			g.Boinc = wireCounts(counts)
		}
	}
	for _, g := range byGroup {
		r.Groups = append(r.Groups, *g)
	}
	sort.Slice(r.Groups, func(i, j int) bool { return r.Groups[i].Group < r.Groups[j].Group })
	return r, nil
}

// StatusWhere is Status with, for each running chain whose work unit is
// in BOINC, where it is there (waiting, on a volunteer, being validated),
// read from BOINC's database in batches for all the chains at once.
// Without BOINC's database the status comes alone, with the reason once.
func (e *Engine) StatusWhere(ctx context.Context, u store.User, group, name string) (wire.StatusResponse, error) {
	st, err := e.Status(ctx, u, group, name)
	if err != nil {
		return st, err
	}
	e.addWhere(ctx, &st)
	return st, nil
}

// addWhere fills the BOINC state of st's running chains.
func (e *Engine) addWhere(ctx context.Context, st *wire.StatusResponse) {
	var wus []string
	for _, c := range st.Chains {
		if c.State == wire.StateRunning && c.WU != "" {
			wus = append(wus, c.WU)
		}
	}
	if len(wus) == 0 {
		return
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		st.BoincError = e.withoutBoinc(fmt.Errorf("BOINC's database is not available: %w", err))
		return
	}
	where, err := bdb.Where(ctx, wus)
	if err != nil {
		st.BoincError = e.withoutBoinc(fmt.Errorf("reading BOINC's database: %w", err))
		return
	}
	e.withoutBoinc(nil)
	for i := range st.Chains {
		c := &st.Chains[i]
		if c.State != wire.StateRunning || c.WU == "" {
			continue
		}
		if w, ok := where[c.WU]; ok {
			c.BoincState, c.BoincSince = wirePlace[w.State], w.Since
		}
	}
}

// withoutBoinc logs why a status goes without BOINC's view, each new
// reason once (nil: BOINC answers again), and returns what the user is
// told: that much, the database's own error only in the log.
func (e *Engine) withoutBoinc(err error) string {
	e.bdbMu.Lock()
	defer e.bdbMu.Unlock()
	if err == nil {
		if e.bdbWarned != "" {
			e.Log.Info("status views read BOINC's database again")
		}
		e.bdbWarned = ""
		return ""
	}
	if msg := err.Error(); msg != e.bdbWarned {
		e.bdbWarned = msg
		e.Log.Warn("status without where steps are in BOINC", "err", err)
	}
	return "BOINC's database cannot be read now, so the status does not say where steps are in BOINC (the server's log says why)"
}

// withoutBoincCounts is withoutBoinc for -gridstatus: the database's own
// error (its address, account, file) goes to the log only.
func (e *Engine) withoutBoincCounts(err error) string {
	e.withoutBoinc(err)
	return "BOINC's database cannot be read now, so BOINC's counts are missing (the server's log says why)"
}

// StatusBoinc is StatusWhere with, for each running chain, its current
// work unit's results in BOINC (when BOINC's database answers).
func (e *Engine) StatusBoinc(ctx context.Context, u store.User, group, name string) (wire.StatusResponse, error) {
	st, err := e.StatusWhere(ctx, u, group, name)
	if err != nil || st.BoincError != "" {
		return st, err
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		st.BoincError = e.withoutBoinc(fmt.Errorf("BOINC's database is not available: %w", err))
		return st, nil
	}
	chains, err := e.q.Chains(ctx, u.ID, group, name)
	if err != nil {
		return st, err
	}
	current := map[string]string{} // chain group/name -> WU
	var wus []string
	for _, c := range chains {
		if c.State == wire.StateRunning && c.StepsDone < c.NSteps {
			wu := c.WU(c.StepsDone)
			current[c.Group+"/"+c.Name] = wu
			wus = append(wus, wu)
		}
	}
	results, err := bdb.Results(ctx, wus)
	if err != nil {
		st.BoincError = e.withoutBoinc(fmt.Errorf("reading BOINC's database: %w", err))
		return st, nil
	}
	for i := range st.Chains {
		c := &st.Chains[i]
		if wu, ok := current[c.Group+"/"+c.Name]; ok {
			c.Boinc = &wire.ChainBoinc{WU: wu, Results: wireResults(results[wu])}
		}
	}
	return st, nil
}
