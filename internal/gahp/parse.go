package gahp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Request is one parsed asynchronous command: its id and what to do.
type Request struct {
	Command string // upper case, e.g. BOINC_SUBMIT
	ID      int
	Submit  *Submit
	Query   *Query
	Fetch   *Fetch
	Jobs    []string // BOINC_ABORT_JOBS
	Batch   string   // BOINC_RETIRE_BATCH, BOINC_SET_LEASE
	Lease   float64  // BOINC_SET_LEASE
}

// Submit is BOINC_SUBMIT's request.
type Submit struct {
	Batch, App string
	Jobs       []Job
	// The optional job parameters HTCondor adds after the jobs ("NULL" or
	// absent: not given): rsc_fpops_est, rsc_fpops_bound,
	// rsc_memory_bound, rsc_disk_bound, delay_bound, app_version_num.
	Params []string
}

// Job is one job of a submission.
type Job struct {
	Name   string
	Args   []string
	Inputs []Input
}

// Input is one input file: where it is here, and the name it is given.
type Input struct {
	Src, Dst string
}

// Query is BOINC_QUERY_BATCHES' request.
type Query struct {
	MinModTime float64
	Batches    []string
}

// Fetch is BOINC_FETCH_OUTPUT's request.
type Fetch struct {
	Job, Dir, Stderr string
	All              bool // ALL; else SOME
	Specs            []Input
}

// jobParams is the number of optional job parameters after a submission's
// jobs.
const jobParams = 6

// asyncCommands are the commands answered through RESULTS.
var asyncCommands = map[string]bool{
	"BOINC_SUBMIT": true, "BOINC_QUERY_BATCHES": true, "BOINC_FETCH_OUTPUT": true, "BOINC_ABORT_JOBS": true,
	"BOINC_RETIRE_BATCH": true, "BOINC_SET_LEASE": true, "BOINC_PING": true,
}

// errSyntax is any request the GAHP answers with E.
var errSyntax = errors.New("malformed request")

// words reads the words of a request one by one.
type words struct {
	w []string
	i int
}

func (r *words) next() (string, error) {
	if r.i >= len(r.w) {
		return "", fmt.Errorf("%w: too few arguments", errSyntax)
	}
	r.i++
	return r.w[r.i-1], nil
}

// count reads a non-negative count bounded by the words left (each item
// takes at least per words), so that no count can make the parser
// allocate more than the line holds.
func (r *words) count(per int) (int, error) {
	s, err := r.next()
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%w: %q is not a count", errSyntax, s)
	}
	if n*per > len(r.w)-r.i {
		return 0, fmt.Errorf("%w: %d items announced, fewer given", errSyntax, n)
	}
	return n, nil
}

func (r *words) float() (float64, error) {
	s, err := r.next()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f {
		return 0, fmt.Errorf("%w: %q is not a number", errSyntax, s)
	}
	return f, nil
}

func (r *words) end() error {
	if r.i != len(r.w) {
		return fmt.Errorf("%w: %d extra arguments", errSyntax, len(r.w)-r.i)
	}
	return nil
}

// Parse reads an asynchronous command from its words (Split of the line):
// the command, the request id, and the command's arguments, each count
// matching what follows. Any error wraps errSyntax.
func Parse(w []string) (Request, error) {
	var q Request
	if len(w) < 2 {
		return q, fmt.Errorf("%w: want a command and a request id", errSyntax)
	}
	q.Command = strings.ToUpper(w[0])
	if !asyncCommands[q.Command] {
		return q, fmt.Errorf("%w: unknown command %q", errSyntax, w[0])
	}
	id, err := strconv.Atoi(w[1])
	if err != nil || strings.HasPrefix(w[1], "+") {
		return q, fmt.Errorf("%w: request id %q is not an integer", errSyntax, w[1])
	}
	q.ID = id
	r := &words{w: w[2:]}
	switch q.Command {
	case "BOINC_SUBMIT":
		q.Submit, err = parseSubmit(r)
	case "BOINC_QUERY_BATCHES":
		q.Query = &Query{}
		if q.Query.MinModTime, err = r.float(); err != nil {
			return q, err
		}
		var n int
		if n, err = r.count(1); err != nil {
			return q, err
		}
		q.Query.Batches = r.w[r.i : r.i+n]
		r.i += n
	case "BOINC_FETCH_OUTPUT":
		q.Fetch, err = parseFetch(r)
	case "BOINC_ABORT_JOBS":
		if len(r.w) == 0 {
			return q, fmt.Errorf("%w: no job to abort", errSyntax)
		}
		q.Jobs, r.i = r.w, len(r.w)
	case "BOINC_RETIRE_BATCH":
		q.Batch, err = r.next()
	case "BOINC_SET_LEASE":
		if q.Batch, err = r.next(); err == nil {
			q.Lease, err = r.float()
		}
	}
	if err != nil {
		return q, err
	}
	return q, r.end()
}

func parseSubmit(r *words) (*Submit, error) {
	s := &Submit{}
	var err error
	if s.Batch, err = r.next(); err != nil {
		return nil, err
	}
	if s.App, err = r.next(); err != nil {
		return nil, err
	}
	njobs, err := r.count(3)
	if err != nil {
		return nil, err
	}
	if njobs == 0 {
		return nil, fmt.Errorf("%w: a batch needs at least one job", errSyntax)
	}
	s.Jobs = make([]Job, 0, njobs)
	for range njobs {
		var j Job
		if j.Name, err = r.next(); err != nil {
			return nil, err
		}
		nargs, err := r.count(1)
		if err != nil {
			return nil, err
		}
		j.Args = r.w[r.i : r.i+nargs]
		r.i += nargs
		nin, err := r.count(2)
		if err != nil {
			return nil, err
		}
		for range nin {
			src, _ := r.next()
			dst, _ := r.next()
			j.Inputs = append(j.Inputs, Input{Src: src, Dst: dst})
		}
		s.Jobs = append(s.Jobs, j)
	}
	// HTCondor's gridmanager sends the job parameters; BOINC's reference
	// GAHP takes them as optional.
	if left := len(r.w) - r.i; left == jobParams {
		s.Params = r.w[r.i:]
		r.i = len(r.w)
	}
	return s, nil
}

func parseFetch(r *words) (*Fetch, error) {
	f := &Fetch{}
	var err error
	if f.Job, err = r.next(); err != nil {
		return nil, err
	}
	if f.Dir, err = r.next(); err != nil {
		return nil, err
	}
	if f.Stderr, err = r.next(); err != nil {
		return nil, err
	}
	mode, err := r.next()
	if err != nil {
		return nil, err
	}
	switch strings.ToUpper(mode) {
	case "ALL":
		f.All = true
	case "SOME":
	default:
		return nil, fmt.Errorf("%w: mode %q is neither ALL nor SOME", errSyntax, mode)
	}
	n, err := r.count(2)
	if err != nil {
		return nil, err
	}
	for range n {
		src, _ := r.next()
		dst, _ := r.next()
		f.Specs = append(f.Specs, Input{Src: src, Dst: dst})
	}
	return f, nil
}
