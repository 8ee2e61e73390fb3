package engine_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
)

// A target its user removes while a batch of its deliveries is being
// sent gets no call after the one in flight: the removal deleted the
// rest from the outbox, and the user took the address back (it may be
// somebody else's now). Before, the batch went on with every delivery it
// had claimed, up to 15 more calls, signed with the user's secret.
func TestNotifyBatchStopsForARemovedTarget(t *testing.T) {
	c := &callLog{}
	var f *fixture
	removed := false
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.ServeHTTP(w, r)
		if !removed {
			removed = true
			ok, err := f.e.State().RemoveNotifyTargets(f.ctx, f.u.ID, store.NotifyWebhook, "http://"+r.Host+"/hook")
			if err != nil || !ok {
				t.Errorf("removing the target: %v, %v", ok, err)
			}
		}
	})
	f, ids := batchFixture(t, h, 8)
	if _, err := f.e.NotifyPass(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.got(); !slices.Equal(got, ids[:1]) {
		t.Fatalf("calls %v after the target was removed in the first; want only %v", got, ids[:1])
	}
	if n, _, _ := f.e.State().OutboxWaiting(f.ctx); n != 0 {
		t.Fatalf("%d deliveries waiting for a removed target", n)
	}
}
