package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// follow retrieves the groups' results as their steps finish, until every
// group is done (no chain runs or waits to) or the command is interrupted.
// It reads the events feed, so a step's outputs arrive within a moment of
// BOINC finishing it, and retrieves each group once per batch of events.
func follow(c *cli.Context, cl *client.Client, groups []string) error {
	for _, g := range groups {
		if err := naming.CheckIdent("group", g); err != nil {
			return client.Usagef("-follow: %v", err)
		}
	}
	groups = slices.Compact(slices.Sorted(slices.Values(groups)))
	// The feed's position first: nothing that happens during the first
	// retrieval is missed.
	r, err := cl.Events(c.Context, -1, 0)
	if err != nil {
		return err
	}
	after := r.LastID
	// On a terminal (or with -verbose) each event is a line, as -watch
	// prints it, before the retrieval it causes.
	talk := !c.Bool("json") && !quietOutput(c)
	open := map[string]bool{}
	for _, g := range groups {
		st, err := cl.Status(c.Context, g, "")
		if err != nil {
			return fmt.Errorf("-follow %s: %w", g, err)
		}
		if live(st) {
			open[g] = true
		}
		if err := retrieve(c, cl, wire.ChainRef{Group: g}); err != nil {
			return err
		}
	}
	for len(open) > 0 && c.Context.Err() == nil {
		r, err := cl.Events(c.Context, after, 30*time.Second)
		if err != nil {
			if c.Context.Err() != nil {
				return nil
			}
			return err
		}
		changed := map[string]bool{}
		for _, e := range r.Events {
			after = e.ID
			if !open[e.Group] {
				continue
			}
			switch e.Type {
			case "step_done", "chain_done", "chain_failed", "chain_aborted", "chain_stopped":
				changed[e.Group] = true
			case "group_done":
				changed[e.Group] = true
				delete(open, e.Group)
			default:
				continue
			}
			if talk {
				// Which chain and step the files to come are of.
				fmt.Fprintln(c.App.Writer, eventLine(e))
			}
		}
		for _, g := range groups {
			if !changed[g] {
				continue
			}
			if err := retrieve(c, cl, wire.ChainRef{Group: g}); err != nil {
				return err
			}
		}
	}
	return nil
}

// live says whether a group has a chain that runs or waits to, or a
// stopped chain whose step is still in BOINC (its outputs to come, and
// group_done after them).
func live(st *wire.StatusResponse) bool {
	for _, ch := range st.Chains {
		if ch.State == wire.StateRunning || ch.State == wire.StateQueued || ch.StepInFlight {
			return true
		}
	}
	return false
}
