package engine_test

import (
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
)

// TestKilledNotifiersDeliveryGoesAtOnce: the notifier daemon is killed
// with SIGKILL while its webhook call hangs; the next notifier sends that
// event within seconds, not once the dead one's 90 s claim ends (until
// then the target got nothing: its events go one at a time).
func TestKilledNotifiersDeliveryGoesAtOnce(t *testing.T) {
	root := t.TempDir()
	e, id := webhookEngine(t, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: testStateDB(t)})
	hook := &eventCounter{got: map[int64]int{}}
	calls := make(chan struct{}, 10)
	var first sync.Once
	release := make(chan struct{})
	serveWebhook(t, e, id, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hang := false
		first.Do(func() { hang = true })
		calls <- struct{}{}
		if hang {
			<-release // the first call never gets its answer
			return
		}
		hook.ServeHTTP(w, r)
	}))
	// Run before the receiver's Close (cleanups go last first): the hanging
	// call returns and the receiver can close.
	t.Cleanup(func() { close(release) })
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
