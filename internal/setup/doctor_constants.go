package setup

import (
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// checkConstantInputs finds the constant inputs (<physical_name>) of the
// queues that are not staged as create_work wants them, with their .md5
// sidecar: it refuses every work unit of such a queue, so every
// submission to it fails (queue_misconfigured) until they are.
func checkConstantInputs(f *Findings, p *boinc.Project, qs []*templates.Queue) {
	for _, q := range qs {
		for _, in := range q.Inputs {
			if !in.Constant {
				continue
			}
			if err := wucreate.ConstantStaged(p, in.Physical); err != nil {
				f.add(Problem, "queue %s: %v; create_work refuses every work unit of the queue until it is (its <physical_name> is in %s)", q.Name, err, q.WUFile)
			}
		}
	}
}
