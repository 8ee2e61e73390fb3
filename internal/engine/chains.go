package engine

import (
	"context"
	"log/slog"

	"github.com/rboinc/rboinc/internal/advance"
)

// Chains is the engine as the advance path sees it: every door hands its
// finished work units to advance.Run with it.
func (e *Engine) Chains() advance.Chains { return chains{e} }

// chains keeps advance.Chains' methods off Engine's own API: only the
// advance path records steps.
type chains struct{ e *Engine }

func (c chains) Root() string      { return c.e.Root }
func (c chains) Log() *slog.Logger { return c.e.Log }

func (c chains) Record(ctx context.Context, it *advance.Item, taken *advance.Taken) error {
	return c.e.recordStep(ctx, it, taken)
}

func (c chains) NoteUnplaced(ctx context.Context, u *advance.Unplaced, entry string) error {
	return c.e.noteUnplaced(ctx, u, entry)
}

func (c chains) InTransaction(ctx context.Context, fn func(ctx context.Context) error) error {
	return c.e.db.Batch(ctx, fn)
}

func (c chains) ReadAhead(ctx context.Context, wus []string) error {
	return c.e.db.ReadAhead(ctx, wus)
}

func (c chains) Sync() error { return c.e.db.Sync() }

func (c chains) CreateNext(ctx context.Context) error { return c.e.kickCreator(ctx) }
