package wucreate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/sqldb"
)

// maxResultTemplateName is the width of workunit.result_template_file.
const maxResultTemplateName = 63

// ReadTemplate reads a template file; like BOINC's read_filename it refuses
// one that does not fit a database blob.
func ReadTemplate(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBlob+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxBlob {
		return "", fmt.Errorf("template %s is larger than %d bytes", path, MaxBlob)
	}
	return string(b), nil
}

// Prepare is BOINC's create_work2 up to the insert: process the input
// template, check the result template and the job parameters. skipped
// reports the missing-result-template quirk: a message, success, no job.
// A non-zero code is BOINC's error code; its messages went to e.Stderr.
func (e *Env) Prepare(j *Job, tmpl string) (w *Row, code int, skipped bool) {
	row := j.WU
	row.App = e.App
	row.CreateTime = e.now()
	if j.Assign {
		row.TransitionerFlags = 2 // TRANSITION_NO_NEW_RESULTS
		if j.AssignMulti {
			row.TransitionerFlags = 1 // TRANSITION_NONE
		}
		row.Assign = &Assignment{TargetType: j.AssignType, TargetID: j.AssignID, Multi: j.AssignMulti}
	}
	add := ""
	if j.SubApp != "" {
		add = "   <sub_appname>" + XMLEscape(j.SubApp) + "</sub_appname>"
	}
	r := templateRun{p: e.Project, vars: j.Files, cmdline: j.CommandLine, additionalXML: add, stdout: e.Stdout, stderr: e.Stderr, sidecars: e.Sidecars}
	if e.Sidecars {
		if e.staged == nil {
			e.staged = map[string]stagedFile{}
		}
		r.staged = e.staged
	}
	doc, code := r.processInputTemplate(tmpl, &row)
	if code != 0 {
		fmt.Fprintf(e.Stderr, "process_input_template(): %s\n", BoincError(code))
		return nil, code, false
	}
	row.XMLDoc = doc
	rt := row.ResultTemplateFile
	if !e.resultTemplateExists(rt) {
		fmt.Fprintf(e.Stderr, "create_work: result template file %s/%s doesn't exist\n", e.ProjPrefix, rt)
		return nil, 0, true
	}
	if len(rt) > maxResultTemplateName {
		fmt.Fprintf(e.Stderr, "result template filename is too big: %d bytes, max is %d\n", len(rt), maxResultTemplateName)
		return nil, errBufferOverflow, false
	}
	if code := checkParams(&row, e.Stderr); code != 0 {
		return nil, code, false
	}
	return &row, 0, false
}

// checkParams is create_work2's parameter sanity check.
func checkParams(w *Row, stderr io.Writer) int {
	nonzero := []struct {
		name string
		zero bool
	}{
		{"rsc_fpops_est", w.RscFpopsEst == 0}, {"rsc_fpops_bound", w.RscFpopsBound == 0},
		{"rsc_disk_bound", w.RscDiskBound == 0}, {"target_nresults", w.TargetNResults == 0},
		{"max_error_results", w.MaxErrorResults == 0}, {"max_total_results", w.MaxTotalResults == 0},
		{"max_success_results", w.MaxSuccessResults == 0},
	}
	for _, f := range nonzero {
		if f.zero {
			fmt.Fprintf(stderr, "no %s given; can't create job\n", f.name)
			return errNoOption
		}
	}
	switch {
	case w.MaxSuccessResults > w.MaxTotalResults:
		fmt.Fprintf(stderr, "max_success_results > max_total_results; can't create job\n")
	case w.MaxErrorResults > w.MaxTotalResults:
		fmt.Fprintf(stderr, "max_error_results > max_total_results; can't create job\n")
	case w.TargetNResults > w.MaxSuccessResults:
		fmt.Fprintf(stderr, "target_nresults %d > max_success_results %d; can't create job\n", w.TargetNResults, w.MaxSuccessResults)
	default:
		return 0
	}
	return errInvalidParam
}

// MySQLMessage words a database error the way MySQL would.
func MySQLMessage(err error, name string) string {
	var tl ErrTooLong
	switch {
	case sqldb.IsDuplicate(err):
		return fmt.Sprintf("Duplicate entry '%s' for key 'name'", name)
	case errors.As(err, &tl):
		return tl.Error()
	case sqldb.IsTooLong(err):
		return ErrTooLong{name}.Error()
	}
	return err.Error()
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func XMLEscape(s string) string { return xmlEscaper.Replace(s) }

// resultTemplateExists looks for a result template; native creation (whose
// Env lives for one run) remembers the ones found.
func (e *Env) resultTemplateExists(rt string) bool {
	if e.Sidecars && e.resultTmpls[rt] {
		return true
	}
	ok := fileExists(filepath.Join(e.Project.Dir, rt))
	if ok && e.Sidecars {
		if e.resultTmpls == nil {
			e.resultTmpls = map[string]bool{}
		}
		e.resultTmpls[rt] = true
	}
	return ok
}
