package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/store"
)

// seedMany gives alice 10,000 chains of 5 steps in 20 groups, in every
// state, with done steps spread over two days; bob is an administrator.
func seedMany(b *testing.B) (*env, http.Handler) {
	v := newEnv(b)
	ctx := context.Background()
	u, _ := v.db.UserByName(ctx, "alice")
	var ncs []store.NewChain
	for i := 0; i < 10000; i++ {
		ncs = append(ncs, store.NewChain{Chain: store.Chain{Group: fmt.Sprintf("group%02d", i%20), Name: fmt.Sprintf("chain%05d", i), Queue: "langevin", App: "langevin", NSteps: 5, Params: "{}", Layout: "{}"}})
	}
	if _, err := v.db.CreateChains(ctx, u, ncs); err != nil {
		b.Fatal(err)
	}
	now := time.Now().Unix()
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO steps(chain_id, step, wu_name, state, created) SELECT c.id, s.n, c.name || '-wu' || s.n, 'pending', %d FROM chains c, (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3 UNION SELECT 4) s`, now),
		fmt.Sprintf(`UPDATE steps SET state = 'done', created = %d - 3600 * (chain_id %% 48) - 60 * (chain_id %% 97), finished = %d - 3600 * (chain_id %% 48) WHERE step < chain_id %% 5`, now, now),
		`UPDATE chains SET steps_done = id % 5, state = CASE WHEN id % 11 = 0 THEN 'failed' WHEN id % 13 = 0 THEN 'stopped' WHEN id % 5 = 4 THEN 'done' ELSE 'running' END`,
		`UPDATE chains SET error = 'work unit ' || name || '-wu1 failed in BOINC (error mask 2)' WHERE state = 'failed'`,
		`UPDATE users SET admin = 1 WHERE name = 'bob'`,
	} {
		if _, err := v.db.SQL().Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	return v, server.New(v.e, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler()
}

func benchGet(b *testing.B, h http.Handler, v *env, user, path string) {
	req := httptest.NewRequest("GET", path, nil)
	req.SetBasicAuth(user, v.tokens[user])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
		}
	}
}

// BenchmarkStatusPages: the status page of a user with 10,000 chains
// (goal: under 300 ms), the metrics (goal: under 50 ms), and as the
// baseline the -status JSON of the same chains, in the same run.
func BenchmarkStatusPages(b *testing.B) {
	v, h := seedMany(b)
	b.Run("page", func(b *testing.B) { benchGet(b, h, v, "alice", "/rboinc_cgi/status/") })
	b.Run("group_page", func(b *testing.B) { benchGet(b, h, v, "alice", "/rboinc_cgi/status/group07") })
	b.Run("metrics", func(b *testing.B) { benchGet(b, h, v, "bob", "/rboinc_cgi/metrics") })
	b.Run("status_json_baseline", func(b *testing.B) { benchGet(b, h, v, "alice", "/rboinc_cgi/api/v1/status") })
}
