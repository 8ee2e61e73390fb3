package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/client/clitool"
	"github.com/rboinc/rboinc/workflow/naming"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

// action picks the first of purge, stop, status, gridstatus, retrieve.
func action(c *cli.Context) error {
	clitool.NoteIgnored(c)
	group, name := c.String("group"), c.String("name")
	if group != "" {
		if err := naming.CheckIdent("group", group); err != nil {
			return client.Usagef("%v", err)
		}
	}
	if name != "" {
		if err := naming.CheckIdent("name", name); err != nil {
			return client.Usagef("%v", err)
		}
		if group == "" {
			return client.Usagef("-name needs -group")
		}
	}
	if group == "" && !c.Bool("status") && !c.Bool("gridstatus") && !c.Bool("watch") && !c.IsSet("follow") {
		return client.Usagef("missing mandatory option -group (see -help)")
	}
	if c.Bool("purge") && (c.IsSet("into") || c.IsSet("intotree")) {
		return client.Usagef("-purge downloads nothing: drop -into and -intotree")
	}
	cl, err := clitool.Connect(c)
	if err != nil {
		return err
	}
	ref := wire.ChainRef{Group: group, Name: name}
	var extend int
	if c.IsSet("extend") {
		n, err := strconv.Atoi(strings.TrimSpace(c.String("extend")))
		if err != nil || n < 1 || n > wire.MaxChainSteps {
			return client.Usagef("-extend takes a number of steps from 1 to %d, not %q", wire.MaxChainSteps, c.String("extend"))
		}
		extend = n
	}
	var priority int
	if c.IsSet("priority") {
		n, err := strconv.Atoi(strings.TrimSpace(c.String("priority")))
		if err != nil {
			return client.Usagef("-priority takes a whole number, not %q", c.String("priority"))
		}
		priority = n
	}
	switch {
	case c.Bool("purge"):
		return change(c, "purge", "Purge", ref, cl.Purge)
	case c.Bool("stop"):
		ref.Cancel = c.Bool("cancel")
		return change(c, "stop", "Stop", ref, cl.Stop)
	case c.Bool("abort"):
		return change(c, "abort", "Abort", ref, cl.Abort)
	case c.Bool("resume"):
		return change(c, "resume", "Resume", ref, cl.Resume)
	case extend > 0:
		return change(c, "extend", fmt.Sprintf("Add %d step(s) to", extend), ref, func(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error) {
			return cl.Extend(ctx, wire.ExtendRequest{ChainRef: ref, Steps: extend})
		})
	case c.IsSet("priority"):
		// Changed back as easily: asked for no confirmation.
		r, err := cl.SetPriority(c.Context, wire.PriorityRequest{ChainRef: ref, Priority: priority})
		if err != nil {
			return fmt.Errorf("cannot set the priority of %s: %w", describe(ref), err)
		}
		return printCount(c, "Priority set", r)
	case c.Bool("watch"):
		return watch(c, cl, group)
	case c.IsSet("follow"):
		return follow(c, cl, c.StringSlice("follow"))
	case c.Bool("status"):
		return status(c, cl, ref)
	case c.Bool("gridstatus"):
		return gridStatus(c, cl, group)
	}
	return retrieve(c, cl, ref)
}

// change asks for confirmation, then stops, aborts, resumes, extends or
// purges.
func change(c *cli.Context, verb, Verb string, ref wire.ChainRef,
	do func(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error)) error {
	what := describe(ref)
	prompt := fmt.Sprintf("%s %s? [y/N] ", Verb, what)
	if err := clitool.Confirm(os.Stdin, os.Stderr, clitool.Interactive(), c.Bool("yes"), verb, prompt); err != nil {
		return err
	}
	r, err := do(c.Context, ref)
	if err != nil {
		return fmt.Errorf("cannot %s %s: %w", verb, what, err)
	}
	return printCount(c, Verb, r)
}

// describe names the group (and chain) a command acts on.
func describe(ref wire.ChainRef) string {
	what := "group " + ref.Group
	if ref.Name != "" {
		what += " (chain " + ref.Name + ")"
	}
	return what
}

// printCount prints what a change did: its message, or the count. A
// change the server could only do in part (BOINC refused to cancel work
// units) is a failure (exit 1), said on stderr as well.
func printCount(c *cli.Context, Verb string, r *wire.CountResponse) error {
	var failed error
	if r.Failed != "" {
		failed = errors.New(r.Failed)
	}
	switch {
	case c.Bool("json"):
		return clitool.WriteJSONResult(c.App.Writer, r, failed)
	case c.Bool("quiet"):
	case r.Message != "":
		fmt.Fprintln(c.App.Writer, r.Message)
	default:
		fmt.Fprintf(c.App.Writer, "%s: %d chain(s) affected.\n", Verb, r.Count)
	}
	return failed
}

// status prints one line per chain, in the server's order.
func status(c *cli.Context, cl *client.Client, ref wire.ChainRef) error {
	get := cl.Status
	if c.Bool("boinc") {
		get = cl.StatusBoinc
	}
	r, err := get(c.Context, ref.Group, ref.Name)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if r.Chains == nil {
			r.Chains = []wire.ChainStatus{}
		}
		return writeJSON(c.App.Writer, r)
	}
	if ref.Name == "" && !c.Bool("boinc") && stdoutTerminal() {
		// A server without the progress endpoint (older) draws no bars.
		if p, err := cl.Progress(c.Context, ref.Group); err == nil && len(p.Groups) > 0 {
			printProgress(c.App.Writer, p.Groups, terminalWidth())
			fmt.Fprintln(c.App.Writer)
		}
	}
	for _, ch := range r.Chains {
		label := ch.Name
		if ref.Group == "" {
			// Across groups a bare name is ambiguous.
			label = ch.Group + "/" + ch.Name
		}
		line := fmt.Sprintf("%s\t%d\t%s\t%d", label, ch.StepsDone, ch.State, ch.NumSteps)
		if ch.Error != "" {
			// Scripts that read four columns keep working: the reason is a fifth.
			line += "\t" + oneField(ch.Error)
		}
		fmt.Fprintln(c.App.Writer, line)
		if ch.Boinc != nil {
			// -boinc: one indented line per result of the current work unit.
			if len(ch.Boinc.Results) == 0 {
				fmt.Fprintf(c.App.Writer, "  %s\tno result yet\n", ch.Boinc.WU)
			}
			for _, res := range ch.Boinc.Results {
				fmt.Fprintf(c.App.Writer, "  %s\t%s%s\n", res.Name, res.State, resultDetail(res))
			}
		}
	}
	// Batches (HTCondor's) after the chains, as comments: scripts that
	// read the chain lines' columns skip them.
	for _, b := range r.Batches {
		lease := "no lease"
		if b.Lease != 0 {
			lease = "lease until " + time.Unix(b.Lease, 0).UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(c.App.Writer, "# batch %s: group %s, queue %s, %s\n", b.Name, b.Group, b.Queue, lease)
	}
	return nil
}

// resultDetail is the host and error code of a result, when it has them.
func resultDetail(r wire.BoincResult) string {
	var s string
	if r.HostID != 0 {
		s += fmt.Sprintf("\thost %d", r.HostID)
	}
	if r.State == "error" {
		s += fmt.Sprintf("\texit status %d", r.ExitStatus)
	}
	return s
}

// oneField keeps a free text inside one tab-separated field of one line.
func oneField(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// groupCount is one line of -gridstatus.
type groupCount struct {
	Group   string            `json:"group"`
	Chains  int               `json:"chains"`
	Running int               `json:"running"`
	Done    int               `json:"done"`
	Failed  int               `json:"failed"`
	Stopped int               `json:"stopped"`
	Boinc   *wire.BoincCounts `json:"boinc,omitempty"`
}

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
	fmt.Fprintln(c.App.Writer, "GROUP\tCHAINS\tRUNNING\tDONE\tFAILED\tSTOPPED\tUNSENT\tIN_PROGRESS\tSUCCESS\tERRORS\tTURNAROUND_H")
	for _, g := range groups {
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d", g.Group, g.Chains, g.Running, g.Done, g.Failed, g.Stopped)
		if b := g.Boinc; b != nil {
			line += fmt.Sprintf("\t%d\t%d\t%d\t%d\t%.1f", b.Unsent, b.InProgress, b.Success, b.Error, b.TurnaroundAvg/3600)
		} else {
			line += "\t-\t-\t-\t-\t-"
		}
		fmt.Fprintln(c.App.Writer, line)
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
			groups = append(groups, &groupCount{Group: g.Group, Chains: g.Chains, Running: g.Running, Done: g.Done,
				Failed: g.Failed, Stopped: g.Stopped, Boinc: g.Boinc})
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
		g.Chains++
		switch ch.State {
		case wire.StateRunning:
			g.Running++
		case wire.StateDone:
			g.Done++
		case wire.StateFailed:
			g.Failed++
		case wire.StateStopped:
			g.Stopped++
		}
	}
	return groups, "the server does not read BOINC's database", nil
}

// retrieve downloads, verifies and acknowledges the group's results.
func retrieve(c *cli.Context, cl *client.Client, ref wire.ChainRef) error {
	in := client.RetrieveInput{Group: ref.Group, Name: ref.Name, Dir: c.String("into"), Keep: c.Bool("keep")}
	if c.IsSet("intotree") {
		if c.IsSet("into") {
			return client.Usagef("give -into or -intotree, not both")
		}
		in.Dir, in.Tree = c.String("intotree"), true
	}
	if in.Dir == "" {
		return client.Usagef("the download directory is empty")
	}
	asJSON := c.Bool("json")
	// Quiet by default off a terminal (cron); -verbose or -quiet=false say otherwise.
	quiet := !clitool.IsTerminal(os.Stdout) && !c.Bool("verbose")
	if c.IsSet("quiet") {
		quiet = c.Bool("quiet")
	}
	start, finish := clitool.Progress(!quiet && !asJSON && clitool.IsTerminal(os.Stderr), "downloading")
	in.OnDownload = start
	rep, err := cl.Retrieve(c.Context, in)
	finish()
	if rep == nil {
		return err
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", prog, f.Error)
	}
	reportFailures(c, cl, in.Dir, ref.Group, ref.Name)
	switch {
	case asJSON:
		// One document: a partial failure's error and exit code go into it.
		return clitool.WriteJSONResult(c.App.Writer, rep, err)
	case !quiet:
		fmt.Fprintf(c.App.Writer, "Retrieved %d, already present %d, out of %d.\n", rep.Retrieved, rep.Present, rep.Total)
	}
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
