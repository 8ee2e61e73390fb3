package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
)

// TestShutdownCutIsNotLogged: a daemon pass cut short by its context's end
// (serve stopping, e.g. at once because its address is taken) logs no
// warning or error: one would be taken for the cause of the stop.
func TestShutdownCutIsNotLogged(t *testing.T) {
	e := nativeRoot(t, "sqlite")
	var buf bytes.Buffer
	e.Log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.ExpireLeasesSoon(ctx)
	if buf.Len() != 0 {
		t.Errorf("a cancelled pass logged:\n%s", buf.String())
	}
}
