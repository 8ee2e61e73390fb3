package engine

import (
	"errors"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Queue describes an application queue to a client: its parameters and
// outputs, read live from the templates.
func (e *Engine) Queue(name string) (wire.Queue, error) {
	q, err := e.Queues.Get(name)
	if err != nil {
		if errors.Is(err, templates.ErrUnknownQueue) {
			return wire.Queue{}, errf(KindUnknownQueue, "unknown application queue %q", name)
		}
		return wire.Queue{}, queueMisconfigured(name, err)
	}
	out := wire.Queue{Name: q.Name, Application: q.Application, Description: q.Description, Parameters: []wire.Parameter{}, Outputs: []wire.Output{}}
	for _, in := range q.Parameters() {
		out.Parameters = append(out.Parameters, wire.Parameter{Name: in.Parameter, Description: in.Description, Optional: in.Optional, OpenName: in.OpenName})
	}
	for _, o := range q.Outputs {
		wo := wire.Output{Index: o.Index, OpenName: o.OpenName, Aliases: o.Aliases}
		if o.Chain >= 0 {
			c := o.Chain
			wo.Chain = &c
		}
		out.Outputs = append(out.Outputs, wo)
	}
	out.Tries = &wire.Tries{MaxErrorResults: e.Cfg.MaxErrorResults, MaxTotalResults: e.Cfg.MaxTotalResults, MaxStepAttempts: e.maxAttempts(store.Chain{})}
	// The queue's template wins over the server's values in create_work.
	if n, ok := q.WorkunitInt("max_error_results"); ok {
		out.Tries.MaxErrorResults = n
	}
	if n, ok := q.WorkunitInt("max_total_results"); ok {
		out.Tries.MaxTotalResults = n
	}
	return out, nil
}
