package setup

import (
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/templates"
)

// checkOutputLimits finds the outputs of a queue whose result template
// gives no <max_nbytes> above 0. BOINC's client starts every file's limit
// at 0 and fails an output larger than it when the task ends
// (client/cs_apps.cpp app_finished, ERR_FILE_TOO_BIG), deleting it, so
// every task that leaves such an output nonempty fails, and every chain of
// the queue with it; a project that generates upload certificates cannot
// even make results from a template without one (add_signatures:
// "missing max_nbytes"). The stand-in does as the client does. Submissions are not refused: an output
// the application always leaves empty, or an optional one it never
// writes, works.
func checkOutputLimits(f *Findings, qs []*templates.Queue) {
	for _, q := range qs {
		var bad []string
		for _, o := range q.Outputs {
			if o.MaxNBytes <= 0 {
				bad = append(bad, fmt.Sprintf("%s (<OUTFILE_%d/>)", o.OpenName, o.Index))
			}
		}
		if len(bad) == 0 {
			continue
		}
		f.add(Problem, "queue %s: %s %s %s no <max_nbytes> above 0 in %s, and BOINC's client then fails every task that leaves %s nonempty (ERR_FILE_TOO_BIG, -131) and deletes the file, so the queue's chains fail at their first step: add <max_nbytes>N</max_nbytes> (the largest size you accept, in bytes) to %s",
			q.Name, pick(len(bad), "output", "outputs"), strings.Join(bad, ", "), pick(len(bad), "has", "have"), q.ResultFile,
			pick(len(bad), "it", "one of them"), pick(len(bad), "its <file_info>", "their <file_info>s"))
	}
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
