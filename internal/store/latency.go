package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"
)

// Latency histograms (the metrics' rboinc_hook_seconds and
// rboinc_create_work_seconds). The hook and the creator run in processes
// of their own, often short-lived, so the counts live in the database: a
// row per kind and bucket, counts not cumulative.

// Latency kinds.
const (
	LatencyHook       = "hook"        // recording one finished work unit
	LatencyCreateWork = "create_work" // one create_work run
)

// LatencyBuckets are the upper bounds (seconds) of the histograms'
// buckets; bucket len(LatencyBuckets) holds the longer ones.
var LatencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// LatencyHist is one kind's histogram: Counts[i] observations in bucket i
// (not cumulative; len(LatencyBuckets)+1 of them), and their sum.
type LatencyHist struct {
	Counts []uint64
	Count  uint64
	Sum    float64
}

// ObserveLatency adds one observation of a kind.
func (d *DB) ObserveLatency(ctx context.Context, kind string, took time.Duration) error {
	sec := took.Seconds()
	b := len(LatencyBuckets)
	for i, le := range LatencyBuckets {
		if sec <= le {
			b = i
			break
		}
	}
	// Inside a Batch (the native assimilator's), the batch's transaction
	// holds the write lock: the observation is written with it.
	if bt, ok := ctx.Value(batchKey{}).(*batch); ok && bt.db == d {
		bt.observe(latencyBucket{kind, b}, sec)
		return nil
	}
	if err := d.Tx(ctx, func(tx *sql.Tx) error { return addLatency(ctx, tx, kind, b, 1, sec) }); err != nil {
		return fmt.Errorf("recording a %s latency: %w", kind, err)
	}
	return nil
}

func addLatency(ctx context.Context, tx *sql.Tx, kind string, bucket int, n uint64, sum float64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO latency(kind, bucket, n, sum) VALUES (?, ?, ?, ?)
		ON CONFLICT(kind, bucket) DO UPDATE SET n = n + excluded.n, sum = sum + excluded.sum`, kind, bucket, n, sum)
	return err
}

type latencyBucket struct {
	kind   string
	bucket int
}

type latencySum struct {
	n   uint64
	sum float64
}

func (b *batch) observe(k latencyBucket, sec float64) {
	b.latMu.Lock()
	defer b.latMu.Unlock()
	if b.latencies == nil {
		b.latencies = map[latencyBucket]latencySum{}
	}
	s := b.latencies[k]
	s.n++
	s.sum += sec
	b.latencies[k] = s
}

// writeLatencies writes the batch's observations into its transaction. As
// for one observation alone, a failure is logged, not the batch's: the
// histograms are for the metrics only.
func (b *batch) writeLatencies(ctx context.Context) {
	b.latMu.Lock()
	defer b.latMu.Unlock()
	for k, s := range b.latencies {
		if err := b.savepoint(ctx, func(tx *sql.Tx) error { return addLatency(ctx, tx, k.kind, k.bucket, s.n, s.sum) }); err != nil {
			slog.Warn("recording latencies for the metrics", "kind", k.kind, "err", err)
		}
	}
	b.latencies = nil
}

// Latencies reads every kind's histogram.
func (d *DB) Latencies(ctx context.Context) (map[string]LatencyHist, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT kind, bucket, n, sum FROM latency`)
	if err != nil {
		return nil, fmt.Errorf("reading latencies: %w", err)
	}
	defer rows.Close()
	out := map[string]LatencyHist{}
	for rows.Next() {
		var kind string
		var b int
		var n uint64
		var sum float64
		if err := rows.Scan(&kind, &b, &n, &sum); err != nil {
			return nil, err
		}
		h := out[kind]
		if h.Counts == nil {
			h.Counts = make([]uint64, len(LatencyBuckets)+1)
		}
		if b >= 0 && b < len(h.Counts) {
			h.Counts[b] += n
		}
		h.Count += n
		h.Sum += sum
		out[kind] = h
	}
	return out, rows.Err()
}
