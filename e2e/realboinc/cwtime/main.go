// Command cwtime is the real-BOINC run's helper for its timing stage
// (e2e/realboinc/run.sh, stage 10; see README.md there): it rebuilds the
// `bin/create_work --stdin` input for the first work units of a submission,
// so that BOINC's own create_work can be timed alone for the same jobs, as
// bench/rbbench does against the stand-in's create_work.
//
//	cwtime lines -root RROOT -report SUBMIT.json -prefix P -args ARGS -lines LINES
//
// SUBMIT.json is `rboinc-submit -json`'s report (its chains' first work
// units). For each of them cwtime reads the chain and step from rboinc's
// state (under RROOT, as the server's user) and writes one create_work line:
// the work unit's name with P in front (a new work unit), the templates,
// priority and staged inputs (their names in BOINC's download hierarchy) the
// server used. ARGS gets create_work's options, one a line (--appname ...
// --stdin). Exit status: 0 written, 1 an error, 2 bad usage.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/pool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "lines" {
		fmt.Fprintln(os.Stderr, "usage: cwtime lines -root RROOT -report SUBMIT.json -prefix P -args FILE -lines FILE")
		return 2
	}
	fs := flag.NewFlagSet("cwtime lines", flag.ContinueOnError)
	root := fs.String("root", "", "rboinc's server root")
	report := fs.String("report", "", "rboinc-submit -json's report of the submission")
	prefix := fs.String("prefix", "", "put in front of every work unit's name (the new work units' names)")
	argsOut := fs.String("args", "", "file for create_work's options, one a line")
	linesOut := fs.String("lines", "", "file for create_work's --stdin lines")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *root == "" || *report == "" || *prefix == "" || *argsOut == "" || *linesOut == "" {
		fmt.Fprintln(os.Stderr, "cwtime lines: -root, -report, -prefix, -args and -lines are all needed")
		return 2
	}
	if err := writeLines(ctx, *root, *report, *prefix, *argsOut, *linesOut); err != nil {
		fmt.Fprintln(os.Stderr, "cwtime lines:", err)
		return 1
	}
	return 0
}

// submitReport is the part of rboinc-submit -json's report cwtime reads.
type submitReport struct {
	Chains []struct {
		FirstWU string `json:"first_wu"`
	} `json:"chains"`
}

func writeLines(ctx context.Context, root, report, prefix, argsOut, linesOut string) error {
	raw, err := os.ReadFile(report)
	if err != nil {
		return err
	}
	var rep submitReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return fmt.Errorf("%s is not rboinc-submit -json's report: %w", report, err)
	}
	if len(rep.Chains) == 0 {
		return fmt.Errorf("%s names no chain", report)
	}
	state, err := engine.OpenState(ctx, root)
	if err != nil {
		return fmt.Errorf("opening rboinc's state under %s: %w", root, err)
	}
	defer state.Close()
	var lines strings.Builder
	var opts []string
	for _, ch := range rep.Chains {
		c, s, err := state.StepByWU(ctx, ch.FirstWU)
		if err != nil {
			return fmt.Errorf("work unit %s: %w", ch.FirstWU, err)
		}
		if opts == nil {
			var p boinc.WorkParams
			if err := json.Unmarshal([]byte(c.Params), &p); err != nil {
				return fmt.Errorf("chain %s's creation parameters: %w", c.Name, err)
			}
			opts = append(p.Args(), "--stdin")
		}
		var files []string
		for _, sum := range s.Inputs {
			if sum != "" {
				files = append(files, pool.PhysicalName(sum))
			}
		}
		j := boinc.Job{WUName: prefix + ch.FirstWU, WUTemplate: c.WUTmpl, ResultTemplate: c.ResTmpl, Priority: c.Priority - s.Step, Files: files}
		lines.WriteString(j.Line())
		lines.WriteByte('\n')
	}
	if err := os.WriteFile(linesOut, []byte(lines.String()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(argsOut)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, o := range opts {
		fmt.Fprintln(w, o)
	}
	return errors.Join(w.Flush(), f.Close())
}
