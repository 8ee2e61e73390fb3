package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/standin"
)

const (
	// CreatorPoll is how often the creator looks for next steps the hook
	// recorded, to create their work units in one create_work run.
	CreatorPoll = 20 * time.Millisecond
	// NotifierPoll is how often the notifier looks for events to send.
	NotifierPoll = time.Second
	// CollectEvery is how often pool collection removes unreferenced
	// contents; CollectGrace spares contents a client asked about recently.
	CollectEvery = time.Minute
	CollectGrace = time.Hour
)

// Creator creates the work units of the steps the hook and the submissions
// record (engine.RunCreator: it waits for the creator lock, which a hook may
// hold for a moment and a creator elsewhere for good).
func Creator(e *engine.Engine, poll time.Duration) Daemon {
	return Daemon{Name: "creator", Run: func(ctx context.Context) error {
		// Native creation on a BOINC schema it does not know is refused
		// before anything is created.
		if err := e.CheckCreation(ctx); err != nil {
			return err
		}
		if err := e.RunCreator(ctx, poll, nil); err != nil {
			return fmt.Errorf("creating the work units of pending steps: %w", err)
		}
		return nil
	}}
}

// Collector removes pool contents nothing refers to, every CollectEvery.
func Collector(e *engine.Engine, every, grace time.Duration) Daemon {
	return Daemon{Name: "pool collection", Run: func(ctx context.Context) error {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				if n, err := e.Collect(ctx, grace); err != nil {
					e.Log.Warn("pool collection", "err", err)
				} else if n > 0 {
					e.Log.Info("pool collection", "removed", n)
				}
			}
		}
	}}
}

// Standin is the embedded BOINC stand-in's simulated project: it prepares
// the download hierarchy, then plays BOINC's daemons and its volunteers
// (and runs rboinc's daemons its config.xml lists, as bin/start would).
func Standin(e *engine.Engine, v *standin.Volunteer) Daemon {
	return Daemon{Name: "boinc-standin", Run: func(ctx context.Context) error {
		// The download hierarchy (a thousand directories) is made beside
		// the volunteer loop, not before it: the loop takes the project's
		// lock at once, which is how doctor sees it running.
		fanout := make(chan struct{})
		defer func() { <-fanout }() // nothing left behind in the project
		go func() {
			defer close(fanout)
			if err := standin.PrepareFanout(ctx, e.Proj); err != nil && ctx.Err() == nil {
				e.Log.Warn("preparing the stand-in's download hierarchy", "err", err)
			}
		}()
		if err := v.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}}
}

// Assimilator is rboinc's native assimilator (engine.RunAssimilator).
func Assimilator(e *engine.Engine, o engine.AssimilatorOptions) Daemon {
	return Daemon{Name: "assimilator", Run: func(ctx context.Context) error { return e.RunAssimilator(ctx, o) }}
}

// Serving are the daemons `serve` runs beside the HTTP server: the
// creator, the notifier, pool collection, and on the embedded stand-in its
// simulated project.
func Serving(e *engine.Engine, log *slog.Logger) []Daemon {
	ds := []Daemon{Creator(e, CreatorPoll), Notifier(e, NotifierPoll), Collector(e, CollectEvery, CollectGrace)}
	if e.Cfg.Simulated {
		// A standby while another host's server plays the project (a
		// second host on the shared project, docs/several-hosts.md).
		ds = append(ds, Standin(e, &standin.Volunteer{ProjectDir: e.Proj.Dir, Standby: true, Logger: log.With("part", "boinc-standin")}))
	}
	return ds
}
