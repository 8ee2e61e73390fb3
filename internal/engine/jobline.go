package engine

import (
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
)

// checkJobLine refuses, at submission, a chain whose create_work --stdin
// line could not be read by create_work (too long, too many words): else
// the chain would be recorded and refused only when a work unit of it is
// made, step 0 or a step much later. The line checked is the chain's
// longest: a step's name at the most steps -extend allows (its numbers
// grow with the chain), the longest priority (the lowest base, less a step each), and every
// input position staged as a file.
func checkJobLine(u store.User, c store.NewChain) error {
	files := make([]string, len(c.Inputs))
	for i := range files {
		files[i] = pool.PhysicalName(strings.Repeat("0", 32))
	}
	j := boinc.Job{
		WUName:         naming.Format(c.Name, u.Name, c.Group, MaxSteps-1, MaxSteps, naming.Tag(0)),
		WUTemplate:     c.WUTmpl,
		ResultTemplate: c.ResTmpl,
		Priority:       -maxAbsPriority - MaxSteps, // the lowest base checkPolicy allows, less a step each
		CommandLine:    c.Args,
		Files:          files,
	}
	if _, err := boinc.CheckLine(j); err != nil {
		return errf(KindBadRequest, "chain %s: its arguments make a job line BOINC's create_work cannot read: %v", c.Name, err)
	}
	return nil
}
