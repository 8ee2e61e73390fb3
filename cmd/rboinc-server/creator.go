package main

import (
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/server"
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
		Flags: []cli.Flag{rootFlag,
			&cli.DurationFlag{Name: "poll", Value: server.CreatorPoll, Usage: "how often to look for next steps to create"},
			&cli.IntFlag{Name: "d", Value: 3, Usage: "debug level, as BOINC's daemons take it (4 or more: debug messages)"}},
		Action: func(c *cli.Context) error {
			// bin/stop signals its daemons and leaves a stop_daemons trigger
			// file, which BOINC's daemons obey until it is removed.
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGHUP)
			defer stop()
			if c.Int("d") >= 4 {
				log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
			}
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
			log.Info("creating the work units of pending steps", "root", e.Root)
			return e.RunCreator(ctx, c.Duration("poll"), stopped)
		},
	}
}

// stopDaemons tells whether BOINC's stop_daemons trigger file is in the
// project directory: bin/stop leaves it, and BOINC's daemons obey it until
// it is removed.
func stopDaemons(projectDir string) func() bool {
	trigger := filepath.Join(projectDir, "stop_daemons")
	return func() bool {
		_, err := os.Stat(trigger)
		return err == nil
	}
}
