package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
)

// eventCounter is a webhook endpoint counting the deliveries of each event.
type eventCounter struct {
	mu  sync.Mutex
	got map[int64]int
}

func (c *eventCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev store.NotifyPayload
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.ID == 0 {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.got[ev.ID]++
	c.mu.Unlock()
}

func (c *eventCounter) counts() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int64]int, len(c.got))
	for k, v := range c.got {
		out[k] = v
	}
	return out
}

// webhookEngine sets up a server root with o, where webhooks may go to
// loopback addresses (the tests' receivers), opens its engine (closed when
// the test ends) and adds the user alice, whose id it returns.
func webhookEngine(t *testing.T, o setup.Options) (*engine.Engine, int64) {
	t.Helper()
	ctx := context.Background()
	testbin.Preinstall(o.Root, o.Exe)
	if _, err := setup.Init(ctx, o); err != nil {
		t.Fatal(err)
	}
	setRootConfig(t, o.Root, "notify_allow", []string{"127.0.0.0/8"})
	e, err := engine.Open(ctx, o.Root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	id, err := e.State().AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	return e, id
}

// serveWebhook serves h as a webhook target of user id for all events, until
// the test ends.
func serveWebhook(t *testing.T, e *engine.Engine, id int64, h http.Handler) {
	t.Helper()
	rc := httptest.NewServer(h)
	t.Cleanup(rc.Close)
	if err := e.State().AddNotifyTarget(context.Background(), store.NotifyTarget{UserID: id, Kind: store.NotifyWebhook,
		Address: rc.URL + "/hook", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
}
