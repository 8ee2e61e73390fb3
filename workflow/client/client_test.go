package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://h/x", "http://", "http://h/x?q=1", "::"} {
		if _, err := New(u, "t"); !errors.Is(err, ErrUsage) {
			t.Errorf("New(%q) = %v, want a usage error", u, err)
		}
	}
	c, err := New("https://h:8080/rboinc_cgi/", "t")
	if err != nil || c.Base.String() != "https://h:8080/rboinc_cgi" {
		t.Fatalf("New = %v, %v", c, err)
	}
}

func TestQueueAndAPIErrors(t *testing.T) {
	f, c := newFake(t)
	f.queues["md"] = &wire.Queue{Name: "md", Parameters: []wire.Parameter{{Name: "coor_file"}}}
	ctx := context.Background()
	q, err := c.Queue(ctx, "md")
	if err != nil || q.Name != "md" || len(q.Parameters) != 1 {
		t.Fatalf("Queue = %+v, %v", q, err)
	}
	_, err = c.Queue(ctx, "nope")
	var api *APIError
	if !errors.As(err, &api) || api.Code != wire.CodeUnknownQueue || api.Status != 404 || ExitCode(err) != ExitRefused {
		t.Fatalf("unknown queue: %v (%+v), exit %d", err, api, ExitCode(err))
	}
	list, err := c.Queues(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "md" {
		t.Fatalf("Queues = %v, %v", list, err)
	}
	c.Token = "wrong"
	_, err = c.Queue(ctx, "md")
	if ExitCode(err) != ExitAuth || !strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("bad token: %v, exit %d", err, ExitCode(err))
	}
}

func TestQueuesEnvelope(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"queues":[{"name":"a"},{"name":"b"}]}`)
	}))
	defer srv.Close()
	c, _ := New(srv.URL, "t")
	list, err := c.Queues(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("Queues = %v, %v", list, err)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer srv.Close()
	c, _ := New(srv.URL, "t")
	c.Retry.First = time.Millisecond
	_, err := c.Status(context.Background(), "g", "")
	if err == nil || !strings.Contains(err.Error(), "bad gateway") || ExitCode(err) != ExitFailure {
		t.Fatalf("err = %v, exit %d", err, ExitCode(err))
	}
	if n := calls.Load(); int(n) != c.Retry.Attempts {
		t.Fatalf("%d tries of a request answered 502, want %d", n, c.Retry.Attempts)
	}
}

// TestRetries: passing failures (503, a dropped connection) are tried
// again until the server answers; a refusal is not; a submission retried
// after its answer was lost is sent whole again.
func TestRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case r.URL.Path == "/rboinc_cgi/api/v1/status" && n == 1:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/rboinc_cgi/api/v1/status" && n == 2:
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close() // the answer is lost
		case r.URL.Path == "/rboinc_cgi/api/v1/status":
			w.Write([]byte(`{"chains": []}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error": "no group g", "code": "not_found"}`))
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL+"/rboinc_cgi", "t")
	c.Retry.First = time.Millisecond
	var noted []int
	c.Retry.OnRetry = func(attempt int, err error, wait time.Duration) { noted = append(noted, attempt) }
	if _, err := c.Status(context.Background(), "g", ""); err != nil {
		t.Fatal(err)
	}
	// (Go's transport itself may try a GET again once when a kept-alive
	// connection drops: one or two retries of ours.)
	if calls.Load() != 3 || len(noted) < 1 {
		t.Fatalf("%d calls, %d retries noted; want 3 and some", calls.Load(), len(noted))
	}
	calls.Store(10)
	if _, err := c.Results(context.Background(), "g", ""); ExitCode(err) != ExitRefused || calls.Load() != 11 {
		t.Fatalf("a refusal: %v after %d calls, want one call", err, calls.Load()-10)
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, _ := New(url+"/rboinc_cgi", "t")
	c.Retry.First = time.Millisecond
	_, err := c.Queues(context.Background())
	if !errors.Is(err, ErrUnreachable) || ExitCode(err) != ExitUnreachable {
		t.Fatalf("err = %v, exit %d", err, ExitCode(err))
	}
	want := "cannot reach the rboinc server at " + url + "/rboinc_cgi: connection refused"
	if err.Error() != want {
		t.Errorf("message\n got %q\nwant %q", err.Error(), want)
	}
}

func TestExitCode(t *testing.T) {
	api := func(s int) error { return fmt.Errorf("doing: %w", &APIError{Status: s}) }
	partial := &kindError{msg: "1 of 2 failed", kind: ErrPartial}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("disk full"), ExitFailure},
		{Usagef("bad"), ExitUsage},
		{fmt.Errorf("x: %w", Usagef("bad")), ExitUsage},
		{&unreachableError{base: "http://h", err: errors.New("refused")}, ExitUnreachable},
		{api(400), ExitRefused},
		{api(404), ExitRefused},
		{api(409), ExitRefused},
		{api(401), ExitAuth},
		{api(403), ExitAuth},
		{api(500), ExitFailure},
		{&kindError{msg: "locked", kind: ErrLocked}, ExitLocked},
		{partial, ExitPartial},
		{errors.Join(nil, partial), ExitPartial},
		{errors.Join(api(500), partial), ExitPartial},
		{errors.Join(api(401), partial), ExitAuth},
		{context.Canceled, ExitFailure},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
