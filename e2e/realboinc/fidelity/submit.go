package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// job is one line of submit's jobs file: rboinc-submit's
// `NAME [-parameter FILE]...`, then optionally `-- ARG...`, the chain's
// command-line arguments.
type job struct {
	client.Job
	Args []string
}

// parseJobs reads submit's jobs file; relative paths are taken relative to
// dir.
func parseJobs(text, src, dir string) ([]job, error) {
	var jobs []job
	for n, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var args []string
		for i, f := range fields {
			if f == "--" {
				fields, args = fields[:i], fields[i+1:]
				break
			}
		}
		js, err := client.ParseJobs(strings.NewReader(strings.Join(fields, " ")), fmt.Sprintf("%s line %d", src, n+1), dir)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, job{Job: js[0], Args: args})
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s names no chain", src)
	}
	return jobs, nil
}

func runSubmit(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("fidelity submit", flag.ContinueOnError)
	queue := fs.String("queue", "", "the rboinc queue")
	group := fs.String("group", "", "the group of the chains")
	jobsFile := fs.String("jobs", "", "jobs file: NAME [-parameter FILE]... [-- ARG...] per line")
	var o wire.Options
	var prio int
	fs.IntVar(&o.NumSteps, "num_steps", 1, "steps per chain")
	fs.IntVar(&prio, "priority", 0, "BOINC priority of the first step (0: rboinc's default)")
	fs.Int64Var(&o.Batch, "batch", 0, "BOINC batch id")
	fs.IntVar(&o.MinQuorum, "min_quorum", 0, "min_quorum")
	fs.IntVar(&o.TargetNResults, "target_nresults", 0, "target_nresults")
	fs.Float64Var(&o.FpopsBound, "fpops_bound", 0, "rsc_fpops_bound")
	fs.Float64Var(&o.MemoryBound, "memory_bound", 0, "rsc_memory_bound")
	fs.Int64Var(&o.AssignUserAll, "assign_user_all", 0, "BOINC user id the work is assigned to")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *queue == "" || *group == "" || *jobsFile == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "fidelity submit: -queue, -group and -jobs are required, and nothing else")
		return 2
	}
	if prio != 0 {
		o.Priority = &prio
	}
	text, err := os.ReadFile(*jobsFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity submit: %v\n", err)
		return 2
	}
	jobs, err := parseJobs(string(text), *jobsFile, filepath.Dir(*jobsFile))
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity submit: %v\n", err)
		return 2
	}
	cl, err := client.New(os.Getenv("RBOINC_URL"), os.Getenv("RBOINC_TOKEN"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity submit: %v\n", err)
		return 2
	}
	q, err := cl.Queue(ctx, *queue)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity submit: queue %s: %v\n", *queue, err)
		return 1
	}
	plain := make([]client.Job, len(jobs))
	for i, j := range jobs {
		plain[i] = j.Job
	}
	chains, err := client.BuildChains(q, nil, plain)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity submit: %v\n", err)
		return 2
	}
	for i := range chains {
		chains[i].Args = jobs[i].Args
	}
	rep, err := cl.SubmitChains(ctx, client.SubmitInput{Queue: *queue, Group: *group, Options: o, Chains: chains})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity submit: %v\n", err)
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	for _, c := range rep.Chains {
		fmt.Fprintf(w, "%s\t%s\n", c.Name, c.FirstWU)
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}
