package metrics

import (
	"context"
	"github.com/rboinc/rboinc/internal/query"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
)

// TestInputCounters: what the daemons count in the state database (inputs
// linked again, inputs the pool no longer had) is in the metrics, and not
// taken for a latency histogram.
func TestInputCounters(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.AddCount(ctx, store.CountInputsRelinked, 3); err != nil {
		t.Fatal(err)
	}
	db.AddCount(ctx, store.CountInputsRelinked, 2)
	db.AddCount(ctx, store.CountInputsUnrestorable, 1)
	m := New(query.New(db), slog.New(slog.NewTextHandler(io.Discard, nil)))
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "rboinc_inputs_") {
			got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if got["rboinc_inputs_relinked_total"] != 5 || got["rboinc_inputs_unrestorable_total"] != 1 {
		t.Fatalf("counters: %v", got)
	}
	lat, err := db.Latencies(ctx)
	if err != nil || len(lat) != 0 {
		t.Fatalf("counters read as latencies: %v %v", lat, err)
	}
}
