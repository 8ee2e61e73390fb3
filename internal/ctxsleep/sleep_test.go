package ctxsleep

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("a live context: Sleep said it ended")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Error("an ended context: Sleep said it is live")
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("an ended context: Sleep waited %v", d)
	}
}
