package engine

import (
	"context"
	"fmt"

	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// queueMisconfigured is the error of a request to queue name that the
// server's configuration cannot serve: the user is told which queue and
// that the administrator must fix it, the detail (with the server's paths)
// goes to the log only.
func queueMisconfigured(name string, detail error) error {
	return &Error{Kind: KindMisconfigured, Err: detail,
		Msg: fmt.Sprintf("queue %q is misconfigured on the server: its administrator must fix it (`rboinc-server doctor` names the problem)", name)}
}

// appMissing words a submission whose work units could not be made
// (cause) when the queue's BOINC application is not in BOINC's app table
// (nor, on the stand-in, declared by its program): create_work's "app not
// found" is the administrator's to fix. nil when the application is there
// or BOINC's database cannot say; asked only after a failure, so that a
// submission costs BOINC's database nothing more.
func (e *Engine) appMissing(ctx context.Context, queue, app string, cause error) error {
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return nil
	}
	known, err := wucreate.AppKnown(ctx, bdb, e.Proj.Dir, app, e.Cfg.Simulated)
	if err != nil || known {
		return nil
	}
	return queueMisconfigured(queue, fmt.Errorf("its BOINC application %s (application= in templates/rboinc_%s_wu) is not in BOINC's app table: %w", app, queue, cause))
}

// constantMissing words a submission whose work units could not be made
// (cause) when a constant input of the queue (<physical_name>) is not
// staged as create_work wants it: the administrator's to stage. nil when
// each is there; asked only after a failure.
func (e *Engine) constantMissing(q *templates.Queue, cause error) error {
	for _, in := range q.Inputs {
		if !in.Constant {
			continue
		}
		if err := wucreate.ConstantStaged(e.Proj, in.Physical); err != nil {
			return queueMisconfigured(q.Name, fmt.Errorf("%w (<physical_name> in %s): %w", err, q.WUFile, cause))
		}
	}
	return nil
}
