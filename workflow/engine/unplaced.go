package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/rboinc/rboinc/workflow/naming"
	"github.com/rboinc/rboinc/workflow/spool"
)

// unplacedError is a hook call for a work unit named as rboinc names them
// that no step of a chain matches (a chain purged and made again, a name
// BOINC changed, a bug): its outputs must not go with BOINC's copies.
type unplacedError struct{ wu naming.WU }

func (u *unplacedError) Error() string {
	return "work unit " + u.wu.String() + " has rboinc's shape but no chain step of that name"
}

// noteUnplaced says, on the chain the work unit's name points to and in the
// log, where the outputs of a call that could not be placed were kept.
func (e *Engine) noteUnplaced(ctx context.Context, u *unplacedError, entry string) error {
	kept := filepath.Join(spool.Dir(e.Root), spool.UnplacedPrefix+entry)
	reason := fmt.Sprintf("needs attention: BOINC finished work unit %s, which matches no step of this chain; its outputs are kept in %s", u.wu.String(), kept)
	n, err := e.DB.MarkAttention(ctx, u.wu.User, u.wu.Group, u.wu.Name, reason)
	if err != nil {
		return err
	}
	e.Log.Error("hook call for a work unit that matches no chain step: outputs kept for the administrator", "wu", u.wu.String(), "kept", kept, "chains_marked", n)
	return nil
}
