package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/workflow/wire"
)

// stdoutTerminal says whether -status writes to a person: it then draws
// each group's progress bar and ETA above the chains' lines (piped, the
// lines alone, unchanged for scripts). A variable for the tests.
var stdoutTerminal = func() bool { return clitool.IsTerminal(os.Stdout) }

// terminalWidth is stdout's width in columns (80 when unknown).
func terminalWidth() int {
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
		return w
	}
	return 80
}

// printProgress draws one line per group: a bar of the steps done, the
// counts, the chains by state and the estimated time to finish.
func printProgress(w io.Writer, groups []wire.GroupProgress, width int) {
	nameW := 5
	for _, g := range groups {
		nameW = max(nameW, len(g.Group))
	}
	barW := min(max(width-nameW-50, 10), 40)
	for _, g := range groups {
		frac := 0.0
		if g.Steps > 0 {
			frac = float64(g.StepsDone) / float64(g.Steps)
		}
		full := int(frac*float64(barW) + 0.5)
		if g.StepsDone < g.Steps {
			full = min(full, barW-1) // not shown complete before it is
		}
		bar := strings.Repeat("█", full) + strings.Repeat("░", barW-full)
		eta := "ETA unknown"
		switch {
		case g.Remaining == 0:
			eta = "nothing left to run"
		case g.ETASeconds > 0:
			eta = "ETA " + briefSpan(time.Duration(g.ETASeconds)*time.Second)
		}
		fmt.Fprintf(w, "%-*s %s %5.1f%%  %d/%d steps  %s  %s\n", nameW, g.Group, bar, 100*frac, g.StepsDone, g.Steps, statesOf(g.States), eta)
	}
}

// statesOf lists chain counts by state, the usual states first.
func statesOf(m map[string]int) string {
	order := map[string]int{wire.StateRunning: 0, wire.StateQueued: 1, wire.StateDone: 2, wire.StateFailed: 3, wire.StateStopped: 4, wire.StateAborted: 5}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, ok := order[keys[i]]
		if !ok {
			oi = len(order)
		}
		oj, ok := order[keys[j]]
		if !ok {
			oj = len(order)
		}
		if oi != oj {
			return oi < oj
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// briefSpan writes a duration for people: 45s, 12m, 3h 20m, 2d 4h.
func briefSpan(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours()/24), int(d.Hours())%24)
}
