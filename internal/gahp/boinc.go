package gahp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// execute runs one asynchronous request and returns its result text:
// "NULL ..." on success, else one escaped word saying what failed.
func (s *Session) execute(ctx context.Context, p Project, q Request) string {
	c, err := connect(p)
	if err != nil {
		if q.Command == "BOINC_SUBMIT" {
			err = inStep("error getting templates: ", err) // BOINC's GAHP's first call
		}
		return failure(q.Command, err)
	}
	switch q.Command {
	case "BOINC_PING":
		if _, err := c.Batches(ctx); err != nil {
			return failure(q.Command, err)
		}
		return "NULL"
	case "BOINC_SUBMIT":
		err = s.submit(ctx, c, q.Submit)
	case "BOINC_QUERY_BATCHES":
		return query(ctx, c, q.Query)
	case "BOINC_FETCH_OUTPUT":
		return s.fetch(ctx, c, q.Fetch)
	case "BOINC_ABORT_JOBS":
		var r *wire.CountResponse
		if r, err = c.AbortJobs(ctx, q.Jobs); err == nil && r.Failed != "" {
			err = errors.New(r.Failed) // aborted in rboinc, not in BOINC
		}
	case "BOINC_RETIRE_BATCH":
		_, err = c.RetireBatch(ctx, q.Batch)
	case "BOINC_SET_LEASE":
		_, err = c.SetLease(ctx, q.Batch, int64(q.Lease))
	}
	if err != nil {
		return failure(q.Command, err)
	}
	return "NULL"
}

// failure is a result's error text, one escaped word, worded as BOINC's
// GAHP (samples/condor/boinc_gahp.cpp) words the failure of each command
// (without its numeric code: rboinc's errors have none); a stepError
// says which of a command's steps failed.
func failure(cmd string, err error) string {
	what := map[string]string{
		"BOINC_PING": "ping_server returned ", "BOINC_SUBMIT": "error submitting jobs: ",
		"BOINC_QUERY_BATCHES": "error querying batch: ", "BOINC_FETCH_OUTPUT": "query_completed_job() returned ",
		"BOINC_ABORT_JOBS": "abort_jobs() returned ", "BOINC_RETIRE_BATCH": "retire_batch() returned ",
		"BOINC_SET_LEASE": "set_lease() returned ",
	}[cmd]
	var se *stepError
	if errors.As(err, &se) {
		what = se.what
	}
	return Escape(what + err.Error())
}

// stepError is the failure of one step of a command, with BOINC's GAHP's
// words for it ("error getting templates: ", "" for a whole sentence).
type stepError struct {
	what string
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// inStep marks err as the failure of a command's step worded what.
func inStep(what string, err error) error {
	if err == nil {
		return nil
	}
	return &stepError{what: what, err: err}
}

// abs makes a path given to the GAHP absolute, relative ones taken from
// the session's directory.
func (s *Session) abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(s.Dir, path)
}

// submit sends a batch: each job a chain of the queue named by the app,
// its inputs bound to the queue's parameters, with one submission.
func (s *Session) submit(ctx context.Context, c *client.Client, sub *Submit) error {
	// The gridmanager sends the job's executable as the application: a
	// path when the submit description names one.
	app := sub.App
	if strings.Contains(app, "/") {
		app = filepath.Base(app)
	}
	q, err := c.Queue(ctx, app)
	if err != nil {
		return inStep("error getting templates: ", err)
	}
	opts, err := jobOptions(sub.Params)
	if err != nil {
		return err
	}
	in := client.SubmitInput{Queue: q.Name, Group: client.IdentFor(sub.Batch), Options: opts,
		Batch: &wire.BatchSpec{Name: sub.Batch}}
	for _, j := range sub.Jobs {
		files, err := bind(q, j.Inputs)
		if err != nil {
			return inStep("error processing input files: ", fmt.Errorf("job %s: %w", j.Name, err))
		}
		for p, path := range files {
			files[p] = s.abs(path)
		}
		in.Chains = append(in.Chains, client.Chain{Name: client.IdentFor(j.Name), Job: j.Name, Args: j.Args, Files: files})
	}
	// rboinc makes the batch with its jobs, in one request: the
	// server's refusals are BOINC's "error submitting jobs", failures
	// before it (reading, hashing, uploading inputs) "error processing
	// input files".
	_, err = c.SubmitChains(ctx, in)
	var api *client.APIError
	if err != nil && !errors.As(err, &api) {
		return inStep("error processing input files: ", err)
	}
	return err
}

// jobOptions reads the job parameters HTCondor sends after the jobs: those
// rboinc has (the first three) become submission options; disk bound,
// delay bound and app version come from the queue's template.
func jobOptions(params []string) (wire.Options, error) {
	var o wire.Options
	dst := []*float64{&o.FpopsEst, &o.FpopsBound, &o.MemoryBound}
	for i, v := range params {
		if i >= len(dst) || strings.EqualFold(v, "NULL") || v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return o, fmt.Errorf("job parameter %d (%s) is not a non-negative number", i+1, v)
		}
		*dst[i] = f
	}
	return o, nil
}

// bind gives each input file a parameter of the queue: one whose open name
// or parameter name is the file's destination name, else the next one not
// bound yet, in the queue's parameter order (as BOINC binds input files to
// its template's file references).
func bind(q *wire.Queue, inputs []Input) (map[string]string, error) {
	files := map[string]string{}
	named := make([]bool, len(inputs))
	for i, in := range inputs {
		for _, p := range q.Parameters {
			if in.Dst != "" && (in.Dst == p.OpenName || in.Dst == p.Name) {
				if _, dup := files[p.Name]; dup {
					return nil, fmt.Errorf("two input files are given for parameter %s (%s)", p.Name, in.Dst)
				}
				files[p.Name] = in.Src
				named[i] = true
				break
			}
		}
	}
	next := 0
	for i, in := range inputs {
		if named[i] {
			continue
		}
		for next < len(q.Parameters) {
			if _, taken := files[q.Parameters[next].Name]; !taken {
				break
			}
			next++
		}
		if next == len(q.Parameters) {
			return nil, fmt.Errorf("input file %s has no parameter left to bind to: queue %s takes %d (%s)", in.Src, q.Name, len(q.Parameters), paramNames(q))
		}
		files[q.Parameters[next].Name] = in.Src
		next++
	}
	for _, p := range q.Parameters {
		if _, ok := files[p.Name]; !ok && !p.Optional {
			return nil, fmt.Errorf("no input file for the mandatory parameter %s (open name %s) of queue %s", p.Name, p.OpenName, q.Name)
		}
	}
	return files, nil
}

func paramNames(q *wire.Queue) string {
	var n []string
	for _, p := range q.Parameters {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// query answers BOINC_QUERY_BATCHES: NULL, the server's time, then per
// batch the number of jobs listed and each job's name and state.
func query(ctx context.Context, c *client.Client, q *Query) string {
	r, err := c.QueryBatches(ctx, wire.BatchQuery{MinModTime: q.MinModTime, Names: q.Batches})
	if err != nil {
		return failure("BOINC_QUERY_BATCHES", err)
	}
	var b strings.Builder
	b.WriteString("NULL ")
	b.WriteString(strconv.FormatFloat(r.ServerTime, 'f', 6, 64))
	for _, bt := range r.Batches {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(len(bt.Jobs)))
		for _, j := range bt.Jobs {
			b.WriteByte(' ')
			b.WriteString(Escape(j.Name))
			b.WriteByte(' ')
			b.WriteString(j.State)
		}
	}
	return b.String()
}
