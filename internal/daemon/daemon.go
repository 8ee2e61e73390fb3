// Package daemon runs rboinc's daemons: the creator, the notifier, the
// native assimilator's loop, pool collection and the embedded stand-in's
// simulated project. Each runs either alone, as a BOINC daemon started by
// bin/start with one start-up code (Begin: BOINC's -d level, SIGHUP, SIGTERM
// and SIGINT, the stop_daemons trigger file, pid and lock files in
// pid_<host>/), or several together beside the HTTP server (`serve`,
// `volunteer`) with Run. The HTTP server (package server) runs none.
package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// A Daemon is one long-running part of rboinc.
type Daemon struct {
	Name string // for the log: "creator", "notifier", ...
	// Run works until ctx ends and then returns nil; an error stops the
	// daemons that run beside it.
	Run func(ctx context.Context) error
}

// Run runs the daemons side by side until ctx ends or one of them fails,
// then stops the others and waits for them. It returns the first failure
// as it is (the caller reports it); later ones are logged.
func Run(ctx context.Context, log *slog.Logger, ds ...Daemon) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, d := range ds {
		wg.Go(func() {
			err := d.Run(ctx)
			if err == nil || (ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))) {
				return // stopped, as asked
			}
			mu.Lock()
			defer mu.Unlock()
			if first != nil {
				log.Error("a daemon stopped", "daemon", d.Name, "err", err)
				return
			}
			first = err
			cancel()
		})
	}
	wg.Wait()
	return first
}

// Beside runs serve (the HTTP server) and the daemons until ctx ends or one
// of them fails; then it stops them all.
func Beside(ctx context.Context, log *slog.Logger, serve func(ctx context.Context) error, ds ...Daemon) error {
	return Run(ctx, log, append([]Daemon{{Name: "http", Run: serve}}, ds...)...)
}
