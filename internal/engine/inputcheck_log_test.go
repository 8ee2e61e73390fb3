package engine_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingHandler counts the records logged at ERROR.
type countingHandler struct {
	mu     sync.Mutex
	errors []string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.mu.Lock()
		h.errors = append(h.errors, r.Message)
		h.mu.Unlock()
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestInputCheckLinkFailureLoggedOnce: an input that cannot be linked
// again (its download directory is not a directory: an operator's
// mistake, or no permission) is logged once, not at every check.
func TestInputCheckLinkFailureLoggedOnce(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"input_check_seconds": 0.2})
	h := &countingHandler{}
	f.e.Log = slog.New(h)
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	dl, _ := f.firstInput(wu)
	dir := filepath.Dir(dl)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.world(true, false)
	time.Sleep(2 * time.Second) // some ten checks
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errors) == 0 || len(h.errors) > 1 {
		t.Fatalf("%d errors logged over some ten checks, want 1:\n%s", len(h.errors), strings.Join(h.errors, "\n"))
	}
}
