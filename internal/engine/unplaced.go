package engine

import (
	"context"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/spool"
)

// noteUnplaced says, on the chain the work unit's name points to (its
// reason, shown by rboinc-retrieve -status) and in the log, where the
// outputs of a call that could not be placed were kept.
func (e *Engine) noteUnplaced(ctx context.Context, u *advance.Unplaced, entry string) error {
	kept := filepath.Join(spool.Dir(e.Root), spool.UnplacedPrefix+entry)
	reason := "needs attention: " + u.Error() + "; its outputs are kept in " + kept
	n, err := e.db.MarkAttention(ctx, u.WU.User, u.WU.Group, u.WU.Name, reason)
	if err != nil {
		return err
	}
	e.Log.Error("hook call for a work unit rboinc cannot place: outputs kept for the administrator", "wu", u.WU.String(), "why", u.Why, "kept", kept, "chains_marked", n)
	return nil
}
