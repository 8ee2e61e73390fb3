package master_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/master"
	"github.com/rboinc/rboinc/workflow/wire"
)

// BenchmarkMasterInFlight: a master with 1,000 work units in flight (one
// step each, submitted in one call) processes their results end to end:
// reading the events feed, downloading and verifying the 3,000 output
// files, calling the handler, acknowledging each event in its state file
// and telling the server to drop its copies (target: >= 200 results/s).
// BOINC's part is played, untimed, before: every work unit finished
// (internal/boinctest) and assimilated by rboinc's native assimilator.
// Baselines of the same round, on the same server and files: the raw
// events feed read to its end (no downloads), and a plain retrieval of
// the same files (client.Retrieve, as rboinc-retrieve makes it).
func BenchmarkMasterInFlight(b *testing.B) {
	n := 1000
	if testing.Short() {
		n = 30 // the smoke run: the code once, no figure to keep
	}
	s := standinserver.Start(b, standinserver.Options{NoCompute: true})
	tok, err := s.AddUser("bench")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	m, err := master.Connect(ctx, s.URL, tok, master.Options{Dir: filepath.Join(dir, "results"), StateFile: filepath.Join(dir, "state")})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := client.New(s.URL, tok)
	if err != nil {
		b.Fatal(err)
	}
	var tMaster, tFeed, tRetrieve time.Duration
	results := 0
	b.ResetTimer()
	for round := 0; round < b.N; round++ {
		b.StopTimer()
		wus := make([]*master.WU, n)
		for i := range wus {
			wus[i] = m.NewWU("langevin", fmt.Sprintf("r%d_w%05d", round, i), inputs())
		}
		if err := m.Submit(ctx, wus...); err != nil {
			b.Fatal(err)
		}
		if got, err := s.Finish(ctx); err != nil || got != n {
			b.Fatalf("finished %d of %d: %v", got, n, err)
		}
		from := m.LastAcked()

		// Baseline 1: the feed alone, from the same point.
		t0 := time.Now()
		events := 0
		for after := from; ; {
			r, err := raw.Events(ctx, after, 0)
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Events) == 0 {
				break
			}
			events += len(r.Events)
			after = r.Events[len(r.Events)-1].ID
		}
		tFeed += time.Since(t0)

		// Baseline 2: a plain retrieval of the same files, elsewhere.
		t0 = time.Now()
		rep, err := raw.Retrieve(ctx, client.RetrieveInput{Group: "master", Consumer: wire.ConsumerMaster, Dir: filepath.Join(dir, fmt.Sprint("plain", round)), Tree: true, Keep: true})
		if err != nil || rep.Retrieved != 3*n {
			b.Fatalf("plain retrieval: %+v, %v", rep, err)
		}
		tRetrieve += time.Since(t0)

		b.StartTimer()
		t0 = time.Now()
		got := 0
		for got < n {
			if _, err := m.Process(ctx, 10*time.Second, func(e *master.Event) error {
				if e.Type == master.EventResult {
					if len(e.Result.Files) != 3 {
						return fmt.Errorf("result %v has %d files", e, len(e.Result.Files))
					}
					got++
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		tMaster += time.Since(t0)
		results += got
		if events < 3*n {
			b.Fatalf("the feed had %d events for %d results", events, n)
		}
	}
	b.StopTimer()
	perSec := float64(results) / tMaster.Seconds()
	b.ReportMetric(perSec, "results/s")
	b.ReportMetric(float64(results)/tFeed.Seconds(), "feed-results/s")
	b.ReportMetric(float64(3*results)/tRetrieve.Seconds(), "retrieve-files/s")
	b.ReportMetric(tMaster.Seconds()/tRetrieve.Seconds(), "master/retrieve")
}

// BenchmarkMasterSteady: the master keeps 1,000 work units in flight:
// each round BOINC's part (untimed) finishes every work unit in flight,
// then the master takes the results (timed, as above) and submits as many
// new work units in one request (timed too), until 3,000 results.
func BenchmarkMasterSteady(b *testing.B) {
	inflight, total := 1000, 3000
	if testing.Short() {
		inflight, total = 30, 90 // the smoke run
	}
	s := standinserver.Start(b, standinserver.Options{NoCompute: true})
	tok, err := s.AddUser("bench")
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("RBOINC_BENCH_DEBUG") != "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}
	ctx := context.Background()
	var tMaster, tSubmit time.Duration
	results := 0
	for round := 0; round < b.N; round++ {
		dir := b.TempDir()
		m, err := master.Connect(ctx, s.URL, tok, master.Options{Tag: fmt.Sprint("s", round), Dir: filepath.Join(dir, "results"), StateFile: filepath.Join(dir, "state")})
		if err != nil {
			b.Fatal(err)
		}
		next := 0
		submit := func(k int) {
			t0 := time.Now()
			wus := make([]*master.WU, k)
			for i := range wus {
				wus[i] = m.NewWU("langevin", fmt.Sprintf("w%06d", next), inputs())
				next++
			}
			if err := m.Submit(ctx, wus...); err != nil {
				b.Fatal(err)
			}
			tSubmit += time.Since(t0)
		}
		submit(inflight)
		got := 0
		for got < total {
			if _, err := s.Finish(ctx); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			back := 0
			for back < min(inflight, next-got) {
				if _, err := m.Process(ctx, 10*time.Second, func(e *master.Event) error {
					if e.Type == master.EventResult {
						back++
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			tMaster += time.Since(t0)
			got += back
			if next < total {
				submit(min(back, total-next))
			}
		}
		results += got
	}
	b.ReportMetric(float64(results)/(tMaster+tSubmit).Seconds(), "results/s")
	b.ReportMetric(float64(results)/tMaster.Seconds(), "results-taken/s")
	b.ReportMetric(float64(results)/tSubmit.Seconds(), "submitted/s")
}
