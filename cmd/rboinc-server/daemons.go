package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
)

// daemonFlags are the flags of rboinc's BOINC daemons (creator, notifier,
// assimilator), as BOINC's own daemons take them, and the daemon's own.
func daemonFlags(own ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{rootFlag,
		&cli.IntFlag{Name: "d", Aliases: []string{"debug_level"}, Value: daemon.DefaultLevel, Usage: "debug level, as BOINC's daemons take it: 1 errors, 2 warnings too, 3 normal messages, 4 debug"},
		&cli.BoolFlag{Name: "one_pass", Usage: "do one pass, then exit"}}, own...)
}

// checkPoll refuses a --poll of 0 or below: the daemon would look again
// at once, for ever, a busy loop on the databases.
func checkPoll(c *cli.Context) error {
	if d := c.Duration("poll"); d <= 0 {
		return usagef("--poll %s: give a positive duration, such as 2s", d)
	}
	return nil
}

// runDaemon is the start-up every daemon subcommand shares: the log at
// its -d level, the server root opened, then daemon.Begin (stop_daemons,
// the pid and lock files, the signals) before run.
func runDaemon(c *cli.Context, log *slog.Logger, s daemon.Start, run func(ctx context.Context, e *engine.Engine) error) error {
	if c.IsSet("d") {
		log = daemon.Logger(os.Stderr, c.Int("d"))
	}
	e, err := engine.Open(c.Context, c.String("root"), log)
	if err != nil {
		return err
	}
	defer e.Close()
	s.Project, s.Log = e.Proj.Dir, log
	ctx, end, err := daemon.Begin(c.Context, s)
	if errors.Is(err, daemon.ErrStopFile) {
		log.Warn(err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	defer end()
	return run(ctx, e)
}
