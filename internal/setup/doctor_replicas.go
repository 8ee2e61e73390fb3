package setup

import (
	"path/filepath"

	"github.com/rboinc/rboinc/internal/boinc"
)

// checkLateReplicas: a step BOINC holds too long gets one more replica
// (late_after); without <one_result_per_user_per_wu/> BOINC's scheduler
// may send it to the very host that is late with the step (seen on a real
// server: e2e/realboinc/FINDINGS.md).
func checkLateReplicas(f *Findings, p *boinc.Project) {
	cfg := filepath.Join(p.Dir, "config.xml")
	switch {
	case p.OneResultPerUserPerWU:
		f.add(OK, "config.xml has <one_result_per_user_per_wu/>: a late step's extra replica goes to another volunteer")
	case p.OneResultPerHostPerWU:
		f.add(Note, "config.xml has <one_result_per_host_per_wu/> but not <one_result_per_user_per_wu/>: a late step's extra replica may go to another host of the volunteer late with it. Add <one_result_per_user_per_wu/> to <config> in %s (the scheduler reads it at its next request; no restart)", cfg)
	default:
		f.add(Note, "config.xml has no <one_result_per_user_per_wu/>: BOINC may send a late step's extra replica (late_after) to the very host that is late with it. Add <one_result_per_user_per_wu/> to <config> in %s (the scheduler reads it at its next request; no restart)", cfg)
	}
}
