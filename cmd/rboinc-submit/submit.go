package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

// submit is the command's action, once the queue is known.
func submit(c *cli.Context, cl *client.Client, q *wire.Queue) error {
	clitool.NoteIgnored(c)
	if c.IsSet("metadata_file") {
		fmt.Fprintf(c.App.ErrWriter, "%s: note: -metadata_file ignored: rboinc keeps no per-chain metadata\n", prog)
	}
	if c.Int("balance") != 0 {
		fmt.Fprintf(c.App.ErrWriter, "%s: note: -balance ignored: rboinc has no load balancer (steps of a chain get decreasing priority)\n", prog)
	}
	if c.Bool("help_parameters") {
		printParameters(c.App.Writer, q)
		return nil
	}
	group := c.String("group")
	if group == "" {
		return client.Usagef("missing mandatory option -group (see -help)")
	}
	if err := naming.CheckIdent("group", group); err != nil {
		return client.Usagef("%v", err)
	}
	jobs, err := jobsOf(c)
	if err != nil {
		return err
	}
	shared := map[string]string{}
	for _, p := range q.Parameters {
		if c.IsSet(p.Name) {
			shared[p.Name] = c.String(p.Name)
		}
	}
	chains, err := client.BuildChainsForSubmit(q, shared, jobs)
	if err != nil {
		return err
	}
	slog.Debug("chains built", "chains", len(chains), "ms", sinceStart())
	opts, err := options(c)
	if err != nil {
		return err
	}

	asJSON, quiet := c.Bool("json"), c.Bool("quiet")
	start, finish := clitool.Progress(!quiet && !asJSON && clitool.IsTerminal(os.Stderr), "uploading")
	var cache *client.HashCache
	if path := client.DefaultHashCachePath(); path != "" && !c.Bool("no_hash_cache") {
		cache = client.OpenHashCache(path)
	}
	var resume *client.UploadMemory
	if path := client.DefaultUploadMemoryPath(); path != "" {
		resume = client.OpenUploadMemory(path)
	}
	rep, err := cl.SubmitChains(c.Context, client.SubmitInput{
		Queue: q.Name, Group: group, Options: opts, Chains: chains, OnUpload: start, HashCache: cache, Resume: resume,
		CheckFiles: true,
	})
	finish()
	if err != nil {
		return err
	}
	return printReport(c.App.Writer, rep, asJSON, quiet)
}

// jobsOf returns the chains named by -name, or by the lines of -jobs.
func jobsOf(c *cli.Context) ([]client.Job, error) {
	if !c.IsSet("jobs") {
		name := c.String("name")
		if name == "" {
			return nil, client.Usagef("missing mandatory option -name (or -jobs FILE; see -help)")
		}
		if err := naming.CheckIdent("name", name); err != nil {
			return nil, client.Usagef("%v", err)
		}
		return []client.Job{{Name: name}}, nil
	}
	if c.IsSet("name") {
		return nil, client.Usagef("-name cannot be used with -jobs: the jobs file names the chains")
	}
	path := c.String("jobs")
	f, err := os.Open(path)
	if err != nil {
		return nil, client.Usagef("cannot read -jobs %s: %v", path, err)
	}
	defer f.Close()
	jobs, err := client.ParseJobs(f, path, filepath.Dir(path))
	if err != nil {
		return nil, client.Usagef("%v", err)
	}
	return jobs, nil
}

// options gathers the submission options, rejecting impossible values
// here rather than after the upload.
func options(c *cli.Context) (wire.Options, error) {
	prio := c.Int("priority")
	o := wire.Options{
		NumSteps:       c.Int("num_steps"),
		Priority:       &prio,
		FpopsEst:       c.Float64("fpops_est"),
		FpopsBound:     c.Float64("fpops_bound"),
		MemoryBound:    c.Float64("memory_bound"),
		TargetNResults: c.Int("target_nresults"),
		MinQuorum:      c.Int("min_quorum"),
		Batch:          c.Int64("batch"),
		DryRun:         c.Bool("dry_run"),
		MaxAttempts:    c.Int("max_attempts"),
		Notify:         c.StringSlice("notify"),
	}
	for _, t := range o.Notify {
		if _, _, err := notifytarget.Parse(t); err != nil {
			return o, client.Usagef("-notify: %v", err)
		}
	}
	if o.MaxAttempts < 0 {
		return o, client.Usagef("-max_attempts must be at least 1, not %d", o.MaxAttempts)
	}
	switch a := strings.TrimSpace(c.String("assign_user_all")); strings.ToLower(a) {
	case "":
	case "me", "self":
		o.AssignUserAll = wire.AssignSelf
	default:
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id < 0 {
			return o, client.Usagef("-assign_user_all takes a BOINC user ID or me, not %q", a)
		}
		o.AssignUserAll = id
	}
	if o.NumSteps < 1 || o.NumSteps > wire.MaxChainSteps {
		return o, client.Usagef("-num_steps takes a number of steps from 1 to %d, not %d", wire.MaxChainSteps, o.NumSteps)
	}
	for name, v := range map[string]float64{
		"fpops_est": o.FpopsEst, "fpops_bound": o.FpopsBound, "memory_bound": o.MemoryBound,
		"target_nresults": float64(o.TargetNResults), "min_quorum": float64(o.MinQuorum),
		"batch": float64(o.Batch),
	} {
		if v < 0 {
			return o, client.Usagef("-%s must not be negative", name)
		}
	}
	if o.MinQuorum > 0 && o.TargetNResults > 0 && o.MinQuorum > o.TargetNResults {
		return o, client.Usagef("-min_quorum %d is more than -target_nresults %d", o.MinQuorum, o.TargetNResults)
	}
	return o, nil
}
