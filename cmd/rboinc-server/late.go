package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/words"
)

// lateCommand gives late steps their extra replica now, where the daemons
// do it once a minute for the steps older than late_after: before a
// deadline, an administrator may want stragglers duplicated sooner.
func lateCommand() *cli.Command {
	return &cli.Command{
		Name:  "late",
		Usage: "give every step BOINC has held longer than --after one more replica, its priority raised by 1000 (once per step; needs BOINC's database)",
		Flags: []cli.Flag{rootFlag,
			&cli.DurationFlag{Name: "after", Usage: "how long BOINC must have held a step (default: rboinc.json's late_after, else 48h)"}},
		Action: func(c *cli.Context) error {
			if c.IsSet("after") && c.Duration("after") <= 0 {
				return usagef("--after must be a positive duration such as 2h or 90m, not %s", c.Duration("after"))
			}
			e, err := engine.Open(c.Context, c.String("root"), newLogger())
			if err != nil {
				return err
			}
			defer e.Close()
			n, err := e.DuplicateLateAfter(c.Context, c.Duration("after"))
			if err != nil {
				return err
			}
			fmt.Printf("%s given one more replica\n", words.Count(n, "late step", "late steps"))
			return nil
		},
	}
}
