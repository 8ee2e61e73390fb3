package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// printParameters is -help_parameters: the queue, then its parameters
// sorted by name, aligned.
func printParameters(w io.Writer, q *wire.Queue) {
	fmt.Fprintf(w, "Application queue %q: %s\n", q.Name, q.Description)
	fmt.Fprintf(w, "BOINC application: %s\n", q.Application)
	params := slices.Clone(q.Parameters)
	slices.SortFunc(params, func(a, b wire.Parameter) int { return strings.Compare(a.Name, b.Name) })
	if len(params) == 0 {
		fmt.Fprintln(w, "This queue takes no file parameters.")
		return
	}
	fmt.Fprintln(w, "Parameters:")
	width := 0
	for _, p := range params {
		width = max(width, len(p.Name)+len(" FILE")+1)
	}
	for _, p := range params {
		opt := ""
		if p.Optional {
			opt = "(optional) "
		}
		fmt.Fprintf(w, "  %-*s   %s%s\n", width, "-"+p.Name+" FILE", opt, p.Description)
	}
	printTries(w, q.Tries)
}

// printTries says how often a failing step runs before its chain fails:
// BOINC's own retries of each work unit come first, then rboinc's new work
// units for the step.
func printTries(w io.Writer, t *wire.Tries) {
	if t == nil {
		return
	}
	boinc := "as often as the queue's template (or BOINC's default) allows"
	runs := 0
	if t.MaxErrorResults > 0 {
		runs = t.MaxErrorResults + 1
		if t.MaxTotalResults > 0 {
			runs = min(runs, t.MaxTotalResults)
		}
		boinc = fmt.Sprintf("up to %s (the server's max_error_results %d", words.Count(runs, "time", "times"), t.MaxErrorResults)
		if t.MaxTotalResults > 0 {
			boinc += fmt.Sprintf(", max_total_results %d", t.MaxTotalResults)
		}
		boinc += ")"
	}
	fmt.Fprintf(w, "Failures: BOINC runs each step's work unit %s, sending it to another\n", boinc)
	fmt.Fprintf(w, "volunteer after each failed run, before it gives up on it; rboinc then makes the\n")
	fmt.Fprintf(w, "step again as a new work unit, up to %s per step (-max_attempts\n", words.Count(t.MaxStepAttempts, "work unit", "work units"))
	fmt.Fprintf(w, "asks for fewer), and then the chain fails.")
	if runs > 0 && t.MaxStepAttempts > 0 {
		fmt.Fprintf(w, " A step whose application always fails runs\n%s in all.", words.Count(runs*t.MaxStepAttempts, "time", "times"))
	}
	fmt.Fprintln(w)
}

// printReport prints what a submission did, for people or as JSON.
func printReport(w io.Writer, rep *client.SubmitReport, asJSON, quiet bool) error {
	if asJSON {
		if rep.Chains == nil {
			rep.Chains = []wire.ChainCreated{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if !quiet {
		fmt.Fprintf(w, "Uploaded %s (%s); %d already on the server\n",
			words.Count(rep.UploadedFiles, "file", "files"), words.Count64(rep.UploadedBytes, "byte", "bytes"), rep.ReusedFiles)
	}
	existing := 0
	for _, ch := range rep.Chains {
		switch {
		case rep.DryRun:
			fmt.Fprintf(w, "Dry run: chain %s would start as %s\n", ch.Name, ch.FirstWU)
		case ch.Existing:
			existing++
			fmt.Fprintf(w, "Already submitted: chain %s exists unchanged, first work unit %s\n", ch.Name, ch.FirstWU)
		default:
			fmt.Fprintf(w, "Submitted chain %s: first work unit %s\n", ch.Name, ch.FirstWU)
		}
	}
	if existing > 0 {
		// Said even under cron: the command was run again after an answer
		// was lost, and nothing is wrong.
		fmt.Fprintf(os.Stderr, "%s: note: already submitted: %s unchanged from an identical earlier submission\n", prog, words.Count(existing, "chain exists", "chains exist"))
	}
	return nil
}
