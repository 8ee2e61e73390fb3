package boinc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Job is one work unit for create_work --stdin.
type Job struct {
	WUName         string
	WUTemplate     string // relative to the project directory
	ResultTemplate string // relative to the project directory
	Priority       int
	Files          []string // physical input names, in the template's <file_info> order
	// CommandLine is the application's command line (--command_line), ""
	// for none. create_work's stdin has no escapes: it may hold neither a
	// double quote nor a newline.
	CommandLine string
}

// WorkParams are the create_work options shared by every job of one run.
// Zero values are left out so that BOINC's (or the template's) apply.
type WorkParams struct {
	App             string
	Batch           int64
	FpopsEst        float64
	FpopsBound      float64
	MemoryBound     float64
	TargetNResults  int
	MinQuorum       int
	MaxErrorResults int
	MaxTotalResults int
	TargetUser      int64 // assigned work: only this BOINC user gets the jobs
}

// Args returns the create_work command-line options for p (without --stdin).
func (p WorkParams) Args() []string {
	a := []string{"--appname", p.App}
	if p.Batch != 0 {
		a = append(a, "--batch", strconv.FormatInt(p.Batch, 10))
	}
	addF := func(opt string, v float64) {
		if v != 0 {
			a = append(a, opt, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	addI := func(opt string, v int) {
		if v != 0 {
			a = append(a, opt, strconv.Itoa(v))
		}
	}
	addF("--rsc_fpops_est", p.FpopsEst)
	addF("--rsc_fpops_bound", p.FpopsBound)
	addF("--rsc_memory_bound", p.MemoryBound)
	addI("--target_nresults", p.TargetNResults)
	addI("--min_quorum", p.MinQuorum)
	addI("--max_error_results", p.MaxErrorResults)
	addI("--max_total_results", p.MaxTotalResults)
	if p.TargetUser != 0 {
		a = append(a, "--target_user", strconv.FormatInt(p.TargetUser, 10))
	}
	return a
}

// Line is the job's --stdin line.
func (j Job) Line() string {
	var b strings.Builder
	b.WriteString("--wu_name ")
	b.WriteString(j.WUName)
	b.WriteString(" --wu_template ")
	b.WriteString(j.WUTemplate)
	b.WriteString(" --result_template ")
	b.WriteString(j.ResultTemplate)
	b.WriteString(" --priority ")
	b.WriteString(strconv.Itoa(j.Priority))
	if j.CommandLine != "" {
		// A quoted word runs to the next same quote, spaces included.
		b.WriteString(` --command_line "`)
		b.WriteString(j.CommandLine)
		b.WriteByte('"')
	}
	for _, f := range j.Files {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String()
}

// maxLine is create_work's stdin line limit (4096-byte buffer, newline and
// terminator included); maxWords its fixed argument array.
const (
	maxLine  = 4094
	maxWords = 99
)

// CreateWork creates all jobs with ONE `bin/create_work --stdin` run in the
// project directory. BOINC inserts the jobs all-or-nothing; a non-zero exit
// comes back as an error carrying create_work's own messages. Every job is
// checked before create_work starts; it is then fed as a CreateWorkRun is
// (whole lines only, see lineFeed), ended whole when ctx ends and gone
// with this process.
func CreateWork(ctx context.Context, p *Project, params WorkParams, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	lines := make([]string, len(jobs))
	seen := map[string]bool{}
	for i, j := range jobs {
		line, err := checkedLine(p, j, seen)
		if err != nil {
			return err
		}
		lines[i] = line
	}
	r, err := StartCreateWork(ctx, p, params)
	if err != nil {
		return err
	}
	for _, line := range lines {
		if err := r.addLine(line); err != nil {
			r.Abort()
			return err
		}
	}
	return r.Finish()
}

// DuplicateWU tells whether err, from create_work run for the single job
// name, says that BOINC holds a work unit of that name already: the message
// of MySQL's unique key on workunit.name (boinc-real-observations.md 3c),
// which the stand-in repeats. rboinc alone makes its names, so that work
// unit is the one a run before a crash created.
func DuplicateWU(err error, name string) bool {
	return err != nil && strings.Contains(err.Error(), "Duplicate entry '"+name+"' for key 'name'")
}

// checkedLine returns the job's --stdin line after checking what
// create_work would not report: a missing result template (it exits 0
// without creating the job), a line it would cut, quotes it would mangle.
// seen, when not nil, remembers the result templates already found.
func checkedLine(p *Project, j Job, seen map[string]bool) (string, error) {
	if !seen[j.ResultTemplate] {
		if filepath.IsAbs(j.ResultTemplate) || len(j.ResultTemplate) > 63 {
			return "", fmt.Errorf("result template path %q must be relative to the project and at most 63 characters", j.ResultTemplate)
		}
		if _, err := os.Stat(filepath.Join(p.Dir, j.ResultTemplate)); err != nil {
			return "", fmt.Errorf("result template %s is missing: %w", j.ResultTemplate, err)
		}
		if seen != nil {
			seen[j.ResultTemplate] = true
		}
	}
	return CheckLine(j)
}

// CheckLine returns the job's --stdin line after checking that create_work
// reads it as rboinc meant: it fits create_work's line buffer, has no more
// words than its argument array holds (the quoted command line is one
// word, as create_work's parse_command_line splits it), and no quote or
// line break that would split or join words. The submission checks its
// chains' longest lines with it, so that a line is not refused only when
// the chains are recorded.
func CheckLine(j Job) (string, error) {
	line := j.Line()
	bare := j
	bare.CommandLine = ""
	words := len(strings.Fields(bare.Line()))
	if j.CommandLine != "" {
		words += 2 // --command_line and its quoted value
	}
	if len(line)+1 > maxLine || words > maxWords {
		return "", fmt.Errorf("work unit %s: create_work line too long (%d bytes, %d words; create_work reads at most %d bytes and %d words)",
			j.WUName, len(line)+1, words, maxLine, maxWords)
	}
	if strings.ContainsAny(j.CommandLine, "\"\n") {
		return "", fmt.Errorf("work unit %s: a command line for create_work may hold no double quote and no newline", j.WUName)
	}
	if strings.ContainsAny(bare.Line(), "\"'\n") {
		return "", fmt.Errorf("work unit %s: refusing quote or newline in a create_work line", j.WUName)
	}
	return line, nil
}
