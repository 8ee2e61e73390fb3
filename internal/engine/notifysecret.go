package engine

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// NotifySecret is the user's own webhook signing secret (made at the
// first ask).
func (e *Engine) NotifySecret(ctx context.Context, u store.User) (wire.NotifySecret, error) {
	s, err := e.db.NotifySecret(ctx, u.ID)
	return wire.NotifySecret{Secret: s}, err
}

// RotateNotifySecret gives the user a new signing secret: the next
// webhook calls are signed with it.
func (e *Engine) RotateNotifySecret(ctx context.Context, u store.User, _ struct{}) (wire.NotifySecret, error) {
	s, err := e.db.RotateNotifySecret(ctx, u.ID)
	if err == nil {
		e.Log.Info("webhook signing secret rotated", "user", u.Name)
	}
	return wire.NotifySecret{Secret: s}, err
}
