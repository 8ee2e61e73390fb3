package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

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
		Flags: []cli.Flag{rootFlag,
			&cli.StringSliceFlag{Name: "app", Usage: "a BOINC application to assimilate (repeat for more; default: the applications of rboinc's queues)"},
			&cli.IntFlag{Name: "d", Value: 2, Usage: "debug level, as BOINC's daemons take it (1 errors, 2 normal, 3 or more debug)"},
			&cli.BoolFlag{Name: "one_pass", Usage: "assimilate what is ready, then exit"},
			&cli.Float64Flag{Name: "sleep_interval", Value: 5, Usage: "seconds to sleep when nothing was ready"},
			&cli.IntFlag{Name: "batch", Value: 500, Usage: "work units read per database query"}},
		Action: func(c *cli.Context) error {
			// bin/stop signals its daemons and leaves a stop_daemons
			// trigger file, which BOINC's daemons obey until it is removed.
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			level := slog.LevelInfo
			switch d := c.Int("d"); {
			case d <= 1:
				level = slog.LevelWarn
			case d >= 3:
				level = slog.LevelDebug
			}
			log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			e, err := engine.Open(ctx, c.String("root"), log)
			if err != nil {
				return err
			}
			defer e.Close()
			stopped := stopDaemons(e.Proj.Dir)
			if stopped() {
				log.Warn("not starting: BOINC's stop_daemons trigger file is present", "dir", e.Proj.Dir)
				return nil
			}
			log.Info("assimilating from BOINC's database", "root", e.Root, "apps", c.StringSlice("app"))
			return e.RunAssimilator(ctx, engine.AssimilatorOptions{
				Apps: c.StringSlice("app"), Batch: c.Int("batch"), OnePass: c.Bool("one_pass"),
				Sleep: time.Duration(c.Float64("sleep_interval") * float64(time.Second)), Stop: stopped,
			})
		},
	}
}
