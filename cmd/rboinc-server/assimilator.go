package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
)

// assimilatorCommand is `rboinc-server assimilator`: rboinc's own BOINC
// assimilator daemon (a <daemon> entry of config.xml), which reads BOINC's
// database in batches instead of having script_assimilator start the hook
// once per work unit.
func assimilatorCommand(log *slog.Logger) *cli.Command {
	return &cli.Command{
		Name:  "assimilator",
		Usage: "advance chains from BOINC's database in batches (run it as a BOINC daemon, instead of script_assimilator and the hook)",
		Flags: daemonFlags(
			&cli.StringSliceFlag{Name: "app", Usage: "a BOINC application to assimilate (repeat for more; default: the applications of rboinc's queues)"},
			&cli.Float64Flag{Name: "sleep_interval", Value: 5, Usage: "seconds to sleep when nothing was ready"},
			&cli.IntFlag{Name: "batch", Value: 500, Usage: "work units read per database query"}),
		Action: func(c *cli.Context) error {
			return runDaemon(c, log, daemon.AssimilatorStart, func(ctx context.Context, e *engine.Engine) error {
				e.Log.Info("assimilating from BOINC's database", "root", e.Root, "apps", c.StringSlice("app"))
				return daemon.Assimilator(e, engine.AssimilatorOptions{
					Apps: c.StringSlice("app"), Batch: c.Int("batch"), OnePass: c.Bool("one_pass"),
					Sleep: time.Duration(c.Float64("sleep_interval") * float64(time.Second)),
				}).Run(ctx)
			})
		},
	}
}
