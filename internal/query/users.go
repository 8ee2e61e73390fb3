package query

import (
	"context"

	"github.com/rboinc/rboinc/internal/store"
)

// Users returns every account, for the administrator's page and the report.
func (r *Reader) Users(ctx context.Context) ([]store.User, error) { return r.db.Users(ctx) }

// UserByName returns the account of that name (store.ErrNotFound if none).
func (r *Reader) UserByName(ctx context.Context, name string) (store.User, error) {
	return r.db.UserByName(ctx, name)
}

// UserByToken returns the account whose token hashes to tokenHash: the
// server's sign-in.
func (r *Reader) UserByToken(ctx context.Context, tokenHash string) (store.User, error) {
	return r.db.UserByToken(ctx, tokenHash)
}
