package main

import (
	"context"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
)

// notifierCommand is `rboinc-server notifier`: the BOINC daemon that sends
// the notifications of chain events (webhooks, e-mail) from the durable
// outbox, whatever else runs.
func notifierCommand(log *slog.Logger) *cli.Command {
	return &cli.Command{
		Name:  "notifier",
		Usage: "send the notifications of chain events (run it as a BOINC daemon)",
		Flags: daemonFlags(&cli.DurationFlag{Name: "poll", Value: daemon.NotifierPoll, Usage: "how often to look for events to send"}),
		Action: func(c *cli.Context) error {
			if err := checkPoll(c); err != nil {
				return err
			}
			return runDaemon(c, log, daemon.NotifierStart, func(ctx context.Context, e *engine.Engine) error {
				if c.Bool("one_pass") {
					return daemon.NotifierPass(ctx, e)
				}
				e.Log.Info("sending the notifications of chain events", "root", e.Root)
				return daemon.Notifier(e, c.Duration("poll")).Run(ctx)
			})
		},
	}
}
