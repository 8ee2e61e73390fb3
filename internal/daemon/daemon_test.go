package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

// Run stops every daemon when one fails, and returns that failure; when
// ctx ends, all stop and Run returns nil.
func TestRunStopsAllAtFirstFailure(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	boom := errors.New("boom")
	stopped := make(chan struct{})
	waiter := Daemon{Name: "waiter", Run: func(ctx context.Context) error { <-ctx.Done(); close(stopped); return nil }}
	failer := Daemon{Name: "failer", Run: func(context.Context) error { time.Sleep(10 * time.Millisecond); return boom }}
	if err := Run(context.Background(), log, waiter, failer); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the failure", err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("the other daemon was not stopped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	w := Daemon{Name: "w", Run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	if err := Run(ctx, log, w, w); err != nil {
		t.Fatalf("Run after ctx ended = %v, want nil", err)
	}
}
