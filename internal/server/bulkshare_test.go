package server_test

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestBulkStreamsShareOfOneUser: a hostile user (frank) opens 96 bulk
// downloads of big answers and never reads them, which he may (the
// standalone server takes max_user_requests, 64, of his at once, and a
// reader just above min_transfer_rate is never cut off). He may hold no
// more than his share of the server-wide bulk streams: another account's
// (carol's) bulk download is still answered. Without the share frank
// held all 64 and every other user's retrieval was refused 503.
func TestBulkStreamsShareOfOneUser(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 96 answers of 12 MiB")
	}
	t.Parallel()
	v := newEnv(t)
	v.addUser("frank")
	v.addUser("carol")
	v.bigFinishedGroup("frank", "big", 4, 1<<20) // 12 MiB an answer
	v.bigFinishedGroup("carol", "mine", 1, 10)
	statuses, conns := bulkStreams(t, v, []string{"frank"}, 96, "big")
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	held, refused := statuses["HTTP/1.1 200 OK"], statuses["HTTP/1.1 429 Too Many Requests"]
	t.Logf("frank's 96 stalled bulk downloads: %v", statuses)
	if held == 0 || held > server.MaxBulkStreamsPerUser || held+refused != 96 {
		t.Errorf("frank's 96 stalled bulk downloads answered %v, want at most %d streaming and the others 429 too_many_requests", statuses, server.MaxBulkStreamsPerUser)
	}
	a := v.call("carol", "POST", server.Base+wire.PathFilesBulk, strings.NewReader(`{"group":"mine"}`))
	if !a.ok() || !strings.Contains(a.body, "RBOINC.md5") {
		t.Fatalf("carol's bulk download while frank holds his stalled ones: %d %.200q", a.status, a.body)
	}
}
