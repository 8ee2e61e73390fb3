package client

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
)

// Job is one chain of a jobs file: its name and the parameter files given
// on its line (parameter name without dash -> path).
type Job struct {
	Name  string
	Files map[string]string
	Line  int // 1-based line in the jobs file; 0 for the command line
}

// maxJobLine bounds one line of a jobs file.
const maxJobLine = 1 << 20

// ParseJobs reads a jobs file: one chain per line, `NAME [-param FILE]...`
// (also `--param FILE` and `-param=FILE`), fields separated by blanks.
// Blank lines and everything from a field starting with '#' are skipped.
// Relative paths are taken relative to dir, the jobs file's directory.
// Errors name the file (src) and line.
func ParseJobs(r io.Reader, src, dir string) ([]Job, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxJobLine)
	var jobs []Job
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if strings.HasPrefix(f, "#") {
				fields = fields[:i]
				break
			}
		}
		if len(fields) == 0 {
			continue
		}
		job, err := parseJobLine(fields, dir)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", src, line, err)
		}
		if prev, dup := seen[job.Name]; dup {
			return nil, fmt.Errorf("%s line %d: chain %s already appears on line %d", src, line, job.Name, prev)
		}
		seen[job.Name] = line
		job.Line = line
		jobs = append(jobs, job)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", src, err)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s names no chain", src)
	}
	return jobs, nil
}

func parseJobLine(fields []string, dir string) (Job, error) {
	job := Job{Name: fields[0], Files: map[string]string{}}
	if err := naming.CheckIdent("chain name", job.Name); err != nil {
		return Job{}, err
	}
	for i := 1; i < len(fields); i++ {
		f := fields[i]
		name, ok := strings.CutPrefix(f, "-")
		if !ok {
			return Job{}, fmt.Errorf("unexpected %q: want -parameter FILE", f)
		}
		name = strings.TrimPrefix(name, "-")
		name, path, hasValue := strings.Cut(name, "=")
		if !hasValue {
			if i+1 >= len(fields) {
				return Job{}, fmt.Errorf("-%s needs a file name", name)
			}
			i++
			path = fields[i]
		}
		if name == "" || path == "" {
			return Job{}, fmt.Errorf("unexpected %q: want -parameter FILE", f)
		}
		if _, dup := job.Files[name]; dup {
			return Job{}, fmt.Errorf("-%s is given twice", name)
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		job.Files[name] = path
	}
	return job, nil
}
