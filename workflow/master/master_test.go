package master_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestResultsArriveVerified: work units submitted in one call finish on
// the stand-in (its real application computing them); each arrives as a
// result event with its three output files on disk, matching their MD5,
// then as finished.
func TestResultsArriveVerified(t *testing.T) {
	// A server of its own, mostly waited on: beside the other tests.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{})
	m := connect(t, s, "alice")
	ctx := context.Background()
	submits := &countSubmits{next: m.Client().HTTP.Transport}
	m.Client().HTTP.Transport = submits
	var wus []*master.WU
	for _, name := range []string{"a", "b", "c"} {
		wus = append(wus, m.NewWU("langevin", name, inputs()))
	}
	if err := m.Submit(ctx, wus...); err != nil {
		t.Fatal(err)
	}
	if submits.n.Load() != 1 {
		t.Errorf("%d submit requests for three work units, want one", submits.n.Load())
	}
	for _, wu := range wus {
		if wu.ID == "" || wu.State != master.StateRunning || wu.Tag != "master" {
			t.Errorf("after Submit: %+v", wu)
		}
	}
	evs := collect(t, m, 60*time.Second, func(evs []*master.Event) bool { return nKinds(evs, "chain_done") == 3 })
	if n := count(evs, master.EventResult); n != 3 {
		t.Fatalf("%d results, want 3: %v", n, evs)
	}
	for _, e := range evs {
		if e.Type != master.EventResult {
			continue
		}
		if len(e.Result.Files) != 3 || e.Result.Alias(".coor") == "" || e.Result.Output(1) == "" {
			t.Fatalf("result %v: files %+v", e, e.Result.Files)
		}
		for _, f := range e.Result.Files {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			sum := md5.Sum(b)
			if hex.EncodeToString(sum[:]) != f.MD5 || int64(len(b)) != f.Size {
				t.Errorf("%s: content does not match its MD5 %s", f.Path, f.MD5)
			}
		}
	}
	if m.LastAcked() != evs[len(evs)-1].ID {
		t.Errorf("acknowledged up to %d, the last event was %d", m.LastAcked(), evs[len(evs)-1].ID)
	}
	// The server drops its copies once the results are acknowledged.
	res, err := m.Client().ResultsFor(ctx, wire.ConsumerMaster, "master", "")
	if err != nil || len(res.Files) != 0 {
		t.Errorf("the server still holds %d result files (%v)", len(res.Files), err)
	}
	n, err := m.Count(ctx, master.StateFinished)
	if err != nil || n != 3 {
		t.Errorf("Count(finished) = %d, %v; want 3", n, err)
	}
}

// countSubmits counts the submissions accepted passing through (a first
// submission naming contents the server lacks is refused with their list
// first, then sent with them: one submission).
type countSubmits struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *countSubmits) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/submit") && resp.StatusCode/100 == 2 {
		c.n.Add(1)
	}
	return resp, err
}
