package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// The notifier daemon alone delivers a chain's events: no creator, no
// server runs.
func TestNotifierDaemonAloneDelivers(t *testing.T) {
	root, exe := newRoot(t)
	setConfig(t, root, "notify_allow", []string{"127.0.0.0/8"})
	var got atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(engine.SignatureHeader) != "" {
			got.Add(1)
		}
	}))
	defer rc.Close()

	ctx := context.Background()
	e, u, up := aliceWithWebhook(t, root, rc.URL+"/hook")
	id := u.ID
	var refs []wire.FileRef
	for _, c := range []string{"1 2 3\n", "0 0 0\n"} {
		tmp := filepath.Join(t.TempDir(), "x")
		os.WriteFile(tmp, []byte(c), 0o644)
		sum, n, _ := md5sum.File(tmp)
		os.WriteFile(filepath.Join(e.DAVRoot(u), up.ID, sum), []byte(c), 0o644)
		refs = append(refs, wire.FileRef{MD5: sum, Size: n})
	}
	if _, err := e.Submit(ctx, u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up.ID, Options: wire.Options{NumSteps: 2},
		Chains: []wire.ChainSpec{{Name: "c1", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}); err != nil {
		t.Fatal(err)
	}
	if evs, err := e.Query().Events(ctx, id, 0, 10); err != nil || len(evs) == 0 {
		t.Fatalf("the submission recorded no event to send (%v)", err)
	}
	time.Sleep(300 * time.Millisecond) // nothing sends them meanwhile
	if n := got.Load(); n != 0 {
		t.Fatalf("%d notifications sent with no notifier running", n)
	}

	p := start(t, exe, "notifier", "--root", root)
	for end := time.Now().Add(30 * time.Second); got.Load() == 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if got.Load() == 0 {
		t.Fatalf("the notifier daemon sent nothing; its output:\n%s", p.out.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.wait(t, 15*time.Second); err != nil {
		t.Fatalf("the notifier exited with %v:\n%s", err, p.out.String())
	}
}

// setConfig sets one key of the root's rboinc.json.
func setConfig(t *testing.T, root, key string, value any) {
	t.Helper()
	path := filepath.Join(root, engine.ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg[key] = value
	b, _ = json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Of two notifiers on one server root (a `serve` beside the notifier
// daemon), one sends and the other waits until it stops, then takes over.
func TestNotifierStandsByWhileAnotherSends(t *testing.T) {
	root, _ := newRoot(t)
	var logA, logB syncBuffer
	open := func(w io.Writer) *engine.Engine {
		e, err := engine.Open(context.Background(), root, slog.New(slog.NewTextHandler(w, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	held := func() bool {
		f, err := os.OpenFile(filepath.Join(root, daemon.NotifierLockName), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
	}
	run := func(e *engine.Engine) (context.CancelFunc, chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- daemon.Notifier(e, 20*time.Millisecond).Run(ctx) }()
		return cancel, done
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("never: %s", what)
			}
		}
	}
	stopA, doneA := run(open(&logA))
	eventually("the first notifier holds the lock", held)
	stopB, doneB := run(open(&logB))
	defer func() { stopB(); <-doneB }()
	eventually("the second notifier says it waits", func() bool {
		return strings.Contains(logB.String(), "another process sends the notifications")
	})
	stopA()
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	eventually("the second notifier takes over", held)
	select {
	case err := <-doneB:
		t.Fatalf("the second notifier stopped: %v", err)
	default:
	}
}

// aliceWithWebhook opens the root's engine, adds user alice with a webhook
// to url for all her events, and opens an upload of hers.
func aliceWithWebhook(t *testing.T, root, url string) (*engine.Engine, store.User, wire.UploadResponse) {
	t.Helper()
	ctx := context.Background()
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db, err := engine.OpenState(ctx, root) // a handle of its own, as the commands open it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	u := store.User{ID: id, Name: "alice"}
	if err := db.AddNotifyTarget(ctx, store.NotifyTarget{UserID: id, Kind: store.NotifyWebhook, Address: url, Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	up, err := e.NewUpload(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	return e, u, up
}
