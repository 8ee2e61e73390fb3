package engine

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TakeFile moves a file of a user's scratch area (an upload of the
// original protocol, which names files by parameter rather than by
// content) into the pool, and returns the reference to submit it by; user
// u sent its bytes, and owns it.
func (e *Engine) TakeFile(ctx context.Context, u store.User, path string) (wire.FileRef, error) {
	// Moved out of the scratch area first, then read once: nothing can
	// change it between the hash and its arrival under its name.
	sum, n, err := e.Pool.IngestAny(path)
	if err != nil {
		return wire.FileRef{}, errf(KindBadRequest, "%v", err)
	}
	if err := e.db.PoolAddOwned(ctx, u.ID, []store.PoolEntry{{MD5: sum, Size: n}}); err != nil {
		return wire.FileRef{}, err
	}
	return wire.FileRef{MD5: sum, Size: n}, nil
}
