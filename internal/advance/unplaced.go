package advance

import "github.com/rboinc/rboinc/internal/naming"

// Unplaced is a hook call for a work unit named as rboinc names them that
// rboinc cannot place (no chain step of that name, a chain purged and made
// again, a result name BOINC changed, a bug): its outputs must not go with
// BOINC's copies, so Run keeps them in the spool for the administrator.
type Unplaced struct {
	WU  naming.WU
	Why string // what is wrong, after the work unit's name
}

func (u *Unplaced) Error() string {
	return "BOINC finished work unit " + u.WU.String() + ", " + u.Why
}

// NoStep is the usual unplaced call: the name matches no step.
func NoStep(w naming.WU) *Unplaced {
	return &Unplaced{WU: w, Why: "which matches no step of this chain"}
}
