package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
)

// TestKilledNotifiersDeliveryGoesAtOnce: the notifier daemon is killed
// with SIGKILL while its webhook call hangs; the next notifier sends that
// event within seconds, not once the dead one's 90 s claim ends (until
// then the target got nothing: its events go one at a time).
func TestKilledNotifiersDeliveryGoesAtOnce(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	opts := setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: testStateDB(t)}
	if _, err := setup.Init(ctx, opts); err != nil {
		t.Fatal(err)
	}
	setRootConfig(t, root, "notify_allow", []string{"127.0.0.0/8"})
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	id, err := e.State().AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	hook := &eventCounter{got: map[int64]int{}}
	calls := make(chan struct{}, 10)
	var first sync.Once
	release := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hang := false
		first.Do(func() { hang = true })
		calls <- struct{}{}
		if hang {
			<-release // the first call never gets its answer
			return
		}
		hook.ServeHTTP(w, r)
	}))
	defer rc.Close()
	defer close(release)
	if err := e.State().AddNotifyTarget(ctx, store.NotifyTarget{UserID: id, Kind: store.NotifyWebhook, Address: rc.URL + "/hook", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	addEvent(t, e, id, store.EvChainDone, "g", "c1")

	notifier := func() *exec.Cmd {
		cmd := exec.Command(serverExe, "notifier", "--root", root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	dead := notifier()
	select {
	case <-calls:
	case <-time.After(30 * time.Second):
		dead.Process.Kill()
		dead.Wait()
		t.Fatal("the notifier made no webhook call")
	}
	dead.Process.Kill() // mid-call
	dead.Wait()
	next := notifier()
	defer func() { next.Process.Kill(); next.Wait() }()
	start := time.Now()
	if !polled(20*time.Second, func() bool { return len(hook.counts()) == 1 }) {
		t.Fatalf("the event killed in flight was not sent again within %v (the dead notifier's claim held it)", time.Since(start).Round(time.Second))
	}
	t.Logf("sent again %v after the next notifier started", time.Since(start).Round(time.Millisecond))
}
