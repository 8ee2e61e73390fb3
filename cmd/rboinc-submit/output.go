package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// helpWidth is the width -help_parameters wraps its text to: 79
// columns, or a narrower terminal's width (a wider one would make lines
// too long to read).
func helpWidth(w io.Writer) int {
	const width, least = 79, 20
	if f, ok := w.(*os.File); ok && clitool.IsTerminal(f) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return max(least, min(width, cols-1))
		}
	}
	return width
}

// printParameters is -help_parameters: the queue, then its parameters
// sorted by name, aligned, each text wrapped (the queue's texts are the
// administrator's, of any length).
func printParameters(w io.Writer, q *wire.Queue) {
	printParametersWidth(w, q, helpWidth(w))
}

func printParametersWidth(w io.Writer, q *wire.Queue, width int) {
	fmt.Fprint(w, words.Indent("", fmt.Sprintf("Application queue %q: %s", q.Name, q.Description), width))
	fmt.Fprint(w, words.Indent("", "BOINC application: "+q.Application, width))
	params := slices.Clone(q.Parameters)
	slices.SortFunc(params, func(a, b wire.Parameter) int { return strings.Compare(a.Name, b.Name) })
	if len(params) == 0 {
		fmt.Fprintln(w, "This queue takes no file parameters.")
		return
	}
	fmt.Fprintln(w, "Parameters:")
	// The texts start in one column, after the longest name; a name
	// longer than a third of the width stands on a line of its own
	// instead, so that it does not push every text to the right.
	col := 0
	for _, p := range params {
		if n := len(p.Name) + len(" FILE") + 1; n <= width/3 {
			col = max(col, n)
		}
	}
	for _, p := range params {
		opt := ""
		if p.Optional {
			opt = "(optional) "
		}
		first := fmt.Sprintf("  %-*s   ", col, "-"+p.Name+" FILE")
		if len(first) > col+5 {
			fmt.Fprintln(w, strings.TrimRight(first, " "))
			first = strings.Repeat(" ", col+5)
		}
		fmt.Fprint(w, words.Indent(first, opt+p.Description, width))
	}
	printTries(w, q.Tries, width)
}

// printTries says how often a failing step runs before its chain fails:
// BOINC's own retries of each work unit come first, then rboinc's new work
// units for the step.
func printTries(w io.Writer, t *wire.Tries, width int) {
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
	text := fmt.Sprintf("BOINC runs each step's work unit %s, sending it to another volunteer after each failed run, "+
		"before it gives up on it; rboinc then makes the step again as a new work unit, up to %s per step "+
		"(-max_attempts asks for fewer), and then the chain fails.", boinc, words.Count(t.MaxStepAttempts, "work unit", "work units"))
	if runs > 0 && t.MaxStepAttempts > 0 {
		text += fmt.Sprintf(" A step whose application always fails runs %s in all.", words.Count(runs*t.MaxStepAttempts, "time", "times"))
	}
	fmt.Fprint(w, words.Indent("", "Failures: "+text, width))
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
