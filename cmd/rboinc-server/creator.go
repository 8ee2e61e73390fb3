package main

import (
	"context"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
)

// creatorCommand is `rboinc-server creator`: a BOINC daemon (a <daemon>
// entry in config.xml, next to the script_assimilator ones) that creates
// the work units of the next steps the hook records, many per create_work
// run. Without it the hook creates each next step itself before returning,
// which bounds a project to a few dozen chain steps per second.
func creatorCommand(log *slog.Logger) *cli.Command {
	return &cli.Command{
		Name:  "creator",
		Usage: "create the next steps' work units in batches (run it as a BOINC daemon beside the assimilators)",
		Flags: daemonFlags(&cli.DurationFlag{Name: "poll", Value: daemon.CreatorPoll, Usage: "how often to look for next steps to create"}),
		Action: func(c *cli.Context) error {
			if err := checkPoll(c); err != nil {
				return err
			}
			return runDaemon(c, log, daemon.CreatorStart, func(ctx context.Context, e *engine.Engine) error {
				if err := e.CheckCreation(ctx); err != nil {
					return err
				}
				if c.Bool("one_pass") {
					return e.CreatorPass(ctx)
				}
				e.Log.Info("creating the work units of pending steps", "root", e.Root)
				return e.RunCreator(ctx, c.Duration("poll"), nil)
			})
		},
	}
}
