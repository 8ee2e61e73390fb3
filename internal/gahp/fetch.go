package gahp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// fetch answers BOINC_FETCH_OUTPUT: it appends the application's stderr to
// the stderr file, downloads the job's outputs (each verified, written
// whole or not at all) under the open names of the result template, or
// where the file specs say, and answers NULL, the exit status, the
// elapsed and the CPU time.
func (s *Session) fetch(ctx context.Context, c *client.Client, f *Fetch) string {
	out, err := c.JobOutput(ctx, f.Job)
	if err != nil {
		return failure("BOINC_FETCH_OUTPUT", err)
	}
	if out.State == wire.JobInProgress {
		return failure("BOINC_FETCH_OUTPUT", fmt.Errorf("job %s is not finished", f.Job))
	}
	dir := s.abs(f.Dir)
	under := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if f.Stderr != "" {
		if err := appendFile(under(f.Stderr), out.Stderr); err != nil {
			return failure("BOINC_FETCH_OUTPUT", inStep("", err))
		}
	}
	byName := map[string]wire.ResultFile{}
	for _, rf := range out.Files {
		if rf.OpenName != "" {
			byName[rf.OpenName] = rf
		}
	}
	dest := map[string]string{} // open name -> local path
	if f.All {
		for name := range byName {
			dest[name] = filepath.Join(dir, filepath.Base(name))
		}
	}
	for _, sp := range f.Specs {
		if _, ok := byName[sp.Src]; !ok {
			if filepath.Base(sp.Src) == filepath.Base(f.Stderr) {
				continue // HTCondor names the stderr file among the outputs: written above
			}
			if out.State == wire.JobError {
				continue // a failed job has no outputs to give
			}
			return failure("BOINC_FETCH_OUTPUT", inStep("", fmt.Errorf("requested file %s not in template (job %s has no such output)", sp.Src, f.Job)))
		}
		dest[sp.Src] = under(sp.Dst)
	}
	for name, path := range dest {
		if err := c.Download(ctx, byName[name], path, nil); err != nil {
			return failure("BOINC_FETCH_OUTPUT", inStep("get_output_file() returned ", fmt.Errorf("output %s: %w", name, err)))
		}
	}
	return "NULL " + strconv.Itoa(out.ExitStatus) + " " + strconv.FormatFloat(out.Elapsed, 'f', 6, 64) + " " + strconv.FormatFloat(out.CPU, 'f', 6, 64)
}

// appendFile adds text to the end of path, as BOINC's GAHP does with the
// stderr file (HTCondor may name /dev/null).
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("can't open stderr output file %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("writing the stderr file %s: %w", path, err)
	}
	return f.Close()
}
