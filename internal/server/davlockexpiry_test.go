package server

import (
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/rboinc/rboinc/internal/engine"
)

// TestExpiredLocksFreed: the periodic sweep frees expired locks of users
// who never come back, and the users' lock managers with them; it keeps
// live locks and the manager of a request in progress.
func TestExpiredLocksFreed(t *testing.T) {
	s := New(&engine.Engine{}, nil)
	fsys := &scratchFS{root: t.TempDir()}
	now := time.Now()
	owner := string(make([]byte, maxLockOwner))
	for _, user := range []string{"gone", "live", "busy"} {
		m, release := s.lockSystem(user, fsys)
		d := time.Minute
		if user == "live" {
			d = 2 * time.Hour // granted as an hour
		}
		for range 50 {
			if _, err := m.create(now, webdav.LockDetails{Root: "/f", Duration: d, OwnerXML: owner, ZeroDepth: true}, true, true); err != nil {
				t.Fatal(err)
			}
		}
		if user != "busy" {
			release()
		}
	}
	s.expireLocks(now.Add(30 * time.Minute))
	if len(s.locks) != 2 || s.locks["gone"] != nil || len(s.locks["live"].locks) != 50 || len(s.locks["busy"].locks) != 0 {
		t.Fatalf("after half an hour: %d managers", len(s.locks))
	}
	s.expireLocks(now.Add(61 * time.Minute))
	if len(s.locks) != 1 || s.locks["busy"] == nil {
		t.Fatalf("after an hour and a minute: %d managers, want only the one in use", len(s.locks))
	}
}
