package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/workflow/client"
)

// reportFailures tells, on stderr and even off a terminal (cron mails it),
// each chain of the group that failed since the last retrieval into dir,
// once: the events seen so far are remembered in dir. The first
// retrieval only remembers where the events are. A server without the
// events feed is passed over in silence.
func reportFailures(c *cli.Context, cl *client.Client, dir, group, name string) {
	mark := filepath.Join(dir, ".rboinc-events-"+group)
	data, err := os.ReadFile(mark)
	after := int64(-1)
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n >= 0 {
			after = n
		}
	}
	last := after
	for range 100 { // pages of the server's size; a bound, not a loop forever
		r, err := cl.Events(c.Context, after, 0)
		if err != nil {
			return
		}
		if after < 0 {
			last = r.LastID
			break
		}
		for _, e := range r.Events {
			last = e.ID
			if e.Type == "chain_failed" && e.Group == group && (name == "" || e.Name == name) {
				fmt.Fprintf(c.App.ErrWriter, "%s: chain %s of group %s failed: %s\n", prog, e.Name, e.Group, oneField(e.Reason))
			}
		}
		if len(r.Events) == 0 {
			break
		}
		after = last
	}
	if last >= 0 {
		tmp := mark + ".new"
		if os.WriteFile(tmp, []byte(strconv.FormatInt(last, 10)+"\n"), 0o644) == nil {
			os.Rename(tmp, mark)
		}
	}
}
