package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestPoolQuotaHoldsUnderConcurrency: clients submitting at the same moment
// cannot pass the pooled-bytes limit together. Each submission brings 20
// new bytes and the limit leaves room for one: exactly one passes, however
// the requests interleave, and the refused ones leave no chain behind.
func TestPoolQuotaHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.submit("alice", "g", "base", 1)
	au, _ := v.db.UserByName(t.Context(), "alice")
	use, err := v.db.UsageOf(t.Context(), au.ID)
	if err != nil {
		t.Fatal(err)
	}
	v.e.Cfg.MaxRunningChains = 0
	v.e.Cfg.MaxPoolBytes = use.PoolBytes + 30

	const clients = 8
	reqs := make([][]byte, clients)
	for i := range clients {
		up, refs := v.upload("alice", fmt.Sprintf("coor %04d\n", i), fmt.Sprintf("velo %04d\n", i))
		reqs[i], _ = json.Marshal(langevin("g", fmt.Sprint("c", i), up, 1, refs[0], refs[1]))
	}
	statuses := make([]int, clients)
	bodies := make([]string, clients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", v.srv.URL+"/rboinc_cgi/api/v1/submit", bytes.NewReader(reqs[i]))
			req.Header.Set("Authorization", "Bearer "+v.tokens["alice"])
			req.Header.Set("Content-Type", "application/json")
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			statuses[i], bodies[i] = resp.StatusCode, string(b)
		})
	}
	close(start)
	wg.Wait()
	passed := 0
	for i, st := range statuses {
		switch {
		case st == http.StatusOK:
			passed++
		case st == http.StatusForbidden && strings.Contains(bodies[i], wire.CodeQuotaExceeded) && strings.Contains(bodies[i], "limit is"):
		default:
			t.Errorf("client %d: %d %s", i, st, bodies[i])
		}
	}
	if passed != 1 {
		t.Fatalf("%d of %d concurrent submissions passed; the limit leaves room for exactly 1", passed, clients)
	}
	if n := v.chainCount(); n != 2 {
		t.Errorf("%d chains recorded, want 2 (base and the one that passed)", n)
	}
	after, err := v.db.UsageOf(t.Context(), au.ID)
	if err != nil || after.PoolBytes > v.e.Cfg.MaxPoolBytes {
		t.Errorf("usage after: %+v (limit %d) %v", after, v.e.Cfg.MaxPoolBytes, err)
	}
}
