package engine

import (
	"context"
	"fmt"

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

// checkQueueApp refuses a submission to a queue whose BOINC application
// is not in BOINC's app table (nor, on the stand-in, declared by its
// program): create_work would fail on it ("app not found") once the chains
// were recorded. When BOINC's database cannot be read the check is left
// to create_work.
func (e *Engine) checkQueueApp(ctx context.Context, queue, app string) error {
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return nil
	}
	known, err := wucreate.AppKnown(ctx, bdb, e.Proj.Dir, app, e.Cfg.Simulated)
	if err == nil && !known {
		return queueMisconfigured(queue, fmt.Errorf("its BOINC application %s (application= in templates/rboinc_%s_wu) is not in BOINC's app table", app, queue))
	}
	return nil
}
