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

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

// action picks the first of purge, stop, status, gridstatus, retrieve.
func action(c *cli.Context) error {
	clitool.NoteIgnored(c)
	if done, err := notifyAction(c); done {
		return err
	}
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
		if files := resumeFiles(c); len(files) > 0 {
			return resumeWithFiles(c, cl, ref, files)
		}
		return change(c, "resume", "Resume", ref, cl.Resume)
	case extend > 0:
		return change(c, "extend", "Add "+words.Count(extend, "step", "steps")+" to", ref, func(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error) {
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
		fmt.Fprintf(c.App.Writer, "%s: %s affected.\n", Verb, words.Count(r.Count, "chain", "chains"))
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
	if r.BoincError != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", prog, r.BoincError)
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
		// Scripts that read four columns keep working: the reason, or
		// where the running step is in BOINC, is a fifth.
		if why := ch.Error; why != "" {
			line += "\t" + oneField(why)
		} else if where := ch.WhereInBoinc(); where != "" {
			line += "\t" + where
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
	// The lock and the events cursor live in the user's state directory:
	// nothing but fetched files lands in the download directory.
	// Without a state directory to write (no home), both stay in the
	// download directory, as they were before.
	state := client.RetrieveStateDir()
	if state != "" && os.MkdirAll(state, 0o700) != nil {
		state = ""
	}
	if state != "" {
		canon, err := client.CanonicalDir(in.Dir)
		if err != nil {
			return fmt.Errorf("the download directory %s: %w", in.Dir, err)
		}
		in.LockFile = client.RetrieveLockPath(state, canon)
	}
	asJSON := c.Bool("json")
	quiet := quietOutput(c)
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
	mark, legacy := eventsMark(c, cl, state, in.Dir, ref.Group)
	reportFailures(c, cl, mark, legacy, ref.Group, ref.Name)
	switch {
	case asJSON:
		// One document: a partial failure's error and exit code go into it.
		return clitool.WriteJSONResult(c.App.Writer, rep, err)
	case !quiet && c.IsSet("follow"):
		fmt.Fprintf(c.App.Writer, "Retrieved %d (group %s), already present %d, out of %d.\n", rep.Retrieved, ref.Group, rep.Present, rep.Total)
	case !quiet:
		fmt.Fprintf(c.App.Writer, "Retrieved %d, already present %d, out of %d.\n", rep.Retrieved, rep.Present, rep.Total)
	}
	return err
}

// quietOutput: no progress and no summary. Quiet by default off a terminal
// (cron); -verbose or -quiet=false say otherwise.
func quietOutput(c *cli.Context) bool {
	if c.IsSet("quiet") {
		return c.Bool("quiet")
	}
	return !clitool.IsTerminal(os.Stdout) && !c.Bool("verbose")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
