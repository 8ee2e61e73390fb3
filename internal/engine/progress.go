package engine

import (
	"context"
	"time"

	"github.com/rboinc/rboinc/internal/stats"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Progress returns the progress of a user's groups (or one), with the
// estimated time to finish each: the status page's figures.
func (e *Engine) Progress(ctx context.Context, u store.User, group string) (wire.ProgressResponse, error) {
	r := wire.ProgressResponse{Groups: []wire.GroupProgress{}}
	if group != "" {
		if err := checkRef(group, "", false); err != nil {
			return r, err
		}
	}
	f, err := stats.Load(ctx, e.q, u.ID, group, time.Now())
	if err != nil {
		return r, err
	}
	for _, g := range f.Groups {
		if group != "" && g.Name != group {
			continue
		}
		p := wire.GroupProgress{Group: g.Name, Chains: g.Chains, States: map[string]int{}, StepsDone: g.StepsDone, Steps: g.Steps,
			Remaining: g.Remaining, RatePerHour: g.Rate}
		for _, s := range g.States {
			p.States[s.State] = s.Chains
		}
		if g.HasETA {
			p.ETASeconds = int64(g.ETA.Seconds())
		}
		r.Groups = append(r.Groups, p)
	}
	if group != "" && len(r.Groups) == 0 {
		return r, notFound(group, "")
	}
	return r, nil
}
