package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
)

// maxSleepInterval bounds --sleep_interval (a day, in seconds): longer is
// a mistake, and a float beyond a Duration's range would wrap negative.
const maxSleepInterval = 86400

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
			if n := c.Int("batch"); n < 1 {
				return usagef("--batch %d: give how many work units to read per query, 1 or more (default 500)", n)
			}
			if s := c.Float64("sleep_interval"); !(s > 0 && s <= maxSleepInterval) {
				return usagef("--sleep_interval %g: give the seconds to sleep when nothing was ready, more than 0 and at most %d (default 5)", s, maxSleepInterval)
			}
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
