package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// watch prints the user's events (of group, when given) as they happen,
// one line each or a JSON object per line, until interrupted.
func watch(c *cli.Context, cl *client.Client, group string) error {
	r, err := cl.Events(c.Context, -1, 0)
	if err != nil {
		return err
	}
	after := r.LastID
	enc := json.NewEncoder(c.App.Writer)
	for c.Context.Err() == nil {
		r, err := cl.Events(c.Context, after, 30*time.Second)
		if err != nil {
			if c.Context.Err() != nil {
				return nil
			}
			return err
		}
		for _, e := range r.Events {
			after = e.ID
			if group != "" && e.Group != group {
				continue
			}
			if c.Bool("json") {
				if err := enc.Encode(e); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintln(c.App.Writer, eventLine(e))
		}
	}
	return nil
}

// eventLine is one event for a person: time, type, group/chain, step, reason.
func eventLine(e wire.Event) string {
	line := time.Unix(e.Time, 0).Format("2006-01-02 15:04:05") + "\t" + e.Type + "\t" + e.Group
	if e.Name != "" {
		line += "/" + e.Name
	}
	if e.Step >= 0 {
		line += fmt.Sprintf("\tstep %d", e.Step)
	}
	if e.Reason != "" {
		line += "\t" + oneField(e.Reason)
	}
	return line
}
