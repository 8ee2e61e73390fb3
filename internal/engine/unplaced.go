package engine

import (
	"context"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/spool"
)

// unplacedError is a hook call for a work unit named as rboinc names them
// that rboinc cannot place (no chain step of that name, a chain purged and
// made again, a result name BOINC changed, a bug): its outputs must not go
// with BOINC's copies.
type unplacedError struct {
	wu  naming.WU
	why string // what is wrong, after the work unit's name
}

func (u *unplacedError) Error() string {
	return "BOINC finished work unit " + u.wu.String() + ", " + u.why
}

// noStep is the usual unplaced call: the name matches no step.
func noStep(w naming.WU) *unplacedError {
	return &unplacedError{wu: w, why: "which matches no step of this chain"}
}

// noteUnplaced says, on the chain the work unit's name points to (its
// reason, shown by rboinc-retrieve -status) and in the log, where the
// outputs of a call that could not be placed were kept.
func (e *Engine) noteUnplaced(ctx context.Context, u *unplacedError, entry string) error {
	kept := filepath.Join(spool.Dir(e.Root), spool.UnplacedPrefix+entry)
	reason := "needs attention: " + u.Error() + "; its outputs are kept in " + kept
	n, err := e.db.MarkAttention(ctx, u.wu.User, u.wu.Group, u.wu.Name, reason)
	if err != nil {
		return err
	}
	e.Log.Error("hook call for a work unit rboinc cannot place: outputs kept for the administrator", "wu", u.wu.String(), "why", u.why, "kept", kept, "chains_marked", n)
	return nil
}
