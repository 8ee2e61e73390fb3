package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// An extend whose answer is lost (the server died after adding the steps)
// is not sent again: the chain would run the steps twice. One the server
// refused as busy is.
func TestExtendIsNotRepeatedAfterALostAnswer(t *testing.T) {
	var calls atomic.Int32
	lose := atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case lose.Load():
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close() // the steps were added; the answer is lost
		case n == 1:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			w.Write([]byte(`{"count": 1, "message": "extended 1 chain by 1 step"}`))
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL+"/rboinc_cgi", "t")
	c.Retry.First = time.Millisecond
	req := wire.ExtendRequest{ChainRef: wire.ChainRef{Group: "g", Name: "c"}, Steps: 1}
	if _, err := c.Extend(context.Background(), req); err != nil || calls.Load() != 2 {
		t.Fatalf("an extend refused as busy, then done: %v after %d calls, want success after 2", err, calls.Load())
	}
	calls.Store(0)
	lose.Store(true)
	_, err := c.Extend(context.Background(), req)
	if calls.Load() != 1 {
		t.Fatalf("an extend whose answer was lost was sent %d times, want once", calls.Load())
	}
	if err == nil || !strings.Contains(err.Error(), "-status") || ExitCode(err) != ExitCode(&unreachableError{err: err}) {
		t.Fatalf("a lost extend's error: %v (exit %d), want one that says to look at -status, exit as unreachable", err, ExitCode(err))
	}
}

// A 503 outcome_unknown (the server's database went away during the
// commit: the steps may be added) ends an extend at once, telling the user
// to look at -status; a request safe to repeat (a stop) is sent again.
func TestOutcomeUnknownRepeatsOnlyWhatIsSafe(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error": "the server lost its database while recording this request", "code": "` + wire.CodeOutcomeUnknown + `"}`))
			return
		}
		w.Write([]byte(`{"count": 1, "message": "done"}`))
	}))
	defer srv.Close()
	c, _ := New(srv.URL+"/rboinc_cgi", "t")
	c.Retry.First = time.Millisecond
	ref := wire.ChainRef{Group: "g", Name: "c"}
	_, err := c.Extend(context.Background(), wire.ExtendRequest{ChainRef: ref, Steps: 1})
	if calls.Load() != 1 || err == nil || !strings.Contains(err.Error(), "-status") {
		t.Fatalf("an extend answered outcome_unknown: %v after %d calls, want one call and an error that says to look at -status", err, calls.Load())
	}
	calls.Store(0)
	if _, err := c.Stop(context.Background(), ref); err != nil || calls.Load() != 2 {
		t.Fatalf("a stop answered outcome_unknown, then done: %v after %d calls, want success after 2", err, calls.Load())
	}
}
