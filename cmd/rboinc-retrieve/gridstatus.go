package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

// groupCount is one line of -gridstatus.
type groupCount = wire.GroupGrid

// gridStatus is the original's -gridstatus, which printed BOINC database
// statistics per group: the chains of each group by state and, from
// BOINC's database, their work units' results of the last 30 days (of one
// group when -group is given).
func gridStatus(c *cli.Context, cl *client.Client, group string) error {
	groups, boincErr, err := gridCounts(c.Context, cl, group)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, groups)
	}
	if boincErr != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: no BOINC figures: %s\n", prog, boincErr)
	}
	// ABORTED comes last: scripts that read the columns by position keep
	// reading the ones they knew.
	fmt.Fprintln(c.App.Writer, "GROUP\tCHAINS\tRUNNING\tDONE\tFAILED\tSTOPPED\tUNSENT\tIN_PROGRESS\tSUCCESS\tERRORS\tTURNAROUND_H\tABORTED")
	for _, g := range groups {
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d", g.Group, g.Chains, g.Running, g.Done, g.Failed, g.Stopped)
		if b := g.Boinc; b != nil {
			line += fmt.Sprintf("\t%d\t%d\t%d\t%d\t%.1f", b.Unsent, b.InProgress, b.Success, b.Error, b.TurnaroundAvg/3600)
		} else {
			line += "\t-\t-\t-\t-\t-"
		}
		fmt.Fprintln(c.App.Writer, line+fmt.Sprintf("\t%d", g.Aborted))
	}
	return nil
}

// gridCounts asks the server for the grid status; a server without it
// gives the chain states alone, counted from the status.
func gridCounts(ctx context.Context, cl *client.Client, group string) ([]*groupCount, string, error) {
	groups := []*groupCount{}
	gs, err := cl.GridStatus(ctx, group)
	if err == nil {
		for _, g := range gs.Groups {
			groups = append(groups, &g)
		}
		return groups, gs.BoincError, nil
	}
	if !errors.Is(err, client.ErrNoGridStatus) {
		return nil, "", err
	}
	r, err := cl.Status(ctx, group, "")
	if err != nil {
		return nil, "", err
	}
	byName := map[string]*groupCount{}
	for _, ch := range r.Chains {
		g, ok := byName[ch.Group]
		if !ok {
			g = &groupCount{Group: ch.Group}
			byName[ch.Group] = g
			groups = append(groups, g)
		}
		g.Count(ch.State)
	}
	return groups, "the server does not read BOINC's database", nil
}
