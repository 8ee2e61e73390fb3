package engine

import (
	"context"
	"time"
)

// observe records how long something took since t0 for the metrics'
// latency histograms. A failure to record is logged, never the caller's:
// the hook and the creator must not fail for a metric.
func (e *Engine) observe(ctx context.Context, kind string, t0 time.Time) {
	if err := e.db.ObserveLatency(context.WithoutCancel(ctx), kind, time.Since(t0)); err != nil {
		e.Log.Warn("recording a latency for the metrics", "kind", kind, "err", err)
	}
}
