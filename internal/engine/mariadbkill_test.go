package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinctest"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestMariaDBKilledUnderTheAdvancePath: rboinc's state and BOINC's database
// on one MariaDB of the test's own; the creator, the native assimilator and
// the notifier run as daemons while BOINC's volunteers finish work units,
// and MariaDB is killed -9 twice mid-run and started again on its data
// directory and socket. Every daemon goes on by itself (none exits, none
// is restarted); every chain ends done, each step's work unit is in BOINC
// once, and the webhook gets every event exactly once.
func TestMariaDBKilledUnderTheAdvancePath(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	// Mostly waiting (on its own MariaDB, the daemons): beside the other waiting tests.
	t.Parallel()
	ctx := context.Background()
	db := startKillableMariaDB(t)
	stateDSN := db.newDatabase(t, "state")
	boincDSN := db.newDatabase(t, "boinc")
	root := t.TempDir()
	e, id := webhookEngine(t, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", Assimilator: setup.AssimNative,
		StateDB: "mysql://" + stateDSN, BoincDB: "mysql://" + boincDSN})
	u := store.User{ID: id, Name: "alice"}
	hook := &eventCounter{got: map[int64]int{}}
	serveWebhook(t, e, id, hook)

	const groups, perGroup, steps = 4, 10, 4
	b := &benchEnv{tb: t, ctx: ctx, e: e, u: u}
	for g := range groups {
		b.submit(b.request(fmt.Sprint("g", g), perGroup, steps))
	}

	var log syncBuffer
	type daemonProc struct {
		name string
		cmd  *exec.Cmd
		done chan error
	}
	var daemons []*daemonProc
	for _, args := range [][]string{
		{"creator", "--root", root},
		{"assimilator", "--root", root, "--sleep_interval", "0.05"},
		{"notifier", "--root", root},
	} {
		d := &daemonProc{name: args[0], cmd: exec.Command(serverExe, args...), done: make(chan error, 1)}
		d.cmd.Stdout, d.cmd.Stderr = &log, &log
		if err := d.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { d.done <- d.cmd.Wait() }()
		t.Cleanup(func() { d.cmd.Process.Kill(); <-d.done })
		daemons = append(daemons, d)
	}
	// BOINC's volunteers: they wait out the outage as BOINC's daemons do.
	bdb, err := e.OpenBoincDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			boinctest.FinishAll(ctx, bdb, e.Proj, nil)
		}
	})
	defer func() { close(stop); bg.Wait() }()

	total := groups * perGroup * steps
	doneSteps := func() int {
		n := 0
		for g := range groups {
			rows, err := e.State().GroupChains(ctx, id, fmt.Sprint("g", g))
			if err != nil {
				return -1 // MariaDB is down
			}
			for _, r := range rows {
				n += r.StepsDone
			}
		}
		return n
	}
	for kill := 1; kill <= 2; kill++ {
		// Mid-run: a share of the steps done, more to come.
		if !polled(3*time.Minute, func() bool { return doneSteps() >= kill*total/3 }) {
			t.Fatalf("%d of %d steps done before kill %d; daemons' log:\n%s", doneSteps(), total, kill, tail([]byte(log.String()), 4000))
		}
		if err := db.kill(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // the daemons meet the outage
		if err := db.start(); err != nil {
			t.Fatal(err)
		}
		t.Logf("MariaDB killed and started again (kill %d)", kill)
	}
	if !polled(4*time.Minute, func() bool { return doneSteps() == total }) {
		t.Fatalf("%d of %d steps done 4 minutes after the last restart; daemons' log:\n%s", doneSteps(), total, tail([]byte(log.String()), 6000))
	}
	for _, d := range daemons {
		select {
		case err := <-d.done:
			t.Errorf("the %s daemon exited (%v): it did not go on by itself after MariaDB came back", d.name, err)
		default:
		}
	}
	for g := range groups {
		st, err := e.Status(ctx, u, fmt.Sprint("g", g), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range st.Chains {
			if c.State != wire.StateDone {
				t.Errorf("chain %s/%s is %s, want done", c.Group, c.Name, c.State)
			}
		}
	}
	// The assimilator marks BOINC's work units after it records their
	// steps: the last pass's marks may come just after the count above.
	polled(time.Minute, func() bool { _, ready := boincCounts(t, e); return ready == 0 })
	if n, ready := boincCounts(t, e); n != total || ready != 0 {
		t.Errorf("BOINC has %d work units (%d ready to assimilate), want %d: a step was created twice or lost", n, ready, total)
	}
	// Every event delivered, once.
	evs, err := e.Query().Events(ctx, id, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if !polled(time.Minute, func() bool { return len(hook.counts()) >= len(evs) }) {
		t.Errorf("the webhook got %d of %d events", len(hook.counts()), len(evs))
	}
	got := hook.counts()
	for _, ev := range evs {
		if got[ev.ID] != 1 {
			t.Errorf("event %d (%s of %s/%s step %d) delivered %d times, want once", ev.ID, ev.Type, ev.Group, ev.Name, ev.Step, got[ev.ID])
		}
	}
	t.Logf("%d events delivered once each; the daemons logged %d failures during the outages",
		len(got), strings.Count(log.String(), "level=ERROR")+strings.Count(log.String(), "level=WARN"))
	if t.Failed() || testing.Verbose() {
		t.Logf("daemons' log:\n%s", tail([]byte(log.String()), 6000))
	}
}

// setRootConfig sets one key of the root's rboinc.json.
func setRootConfig(t *testing.T, root, key string, value any) {
	t.Helper()
	path := filepath.Join(root, engine.ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg[key] = value
	if data, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWebhookOnceAcrossMariaDBKill: MariaDB dies while a webhook call is in
// flight (the receiver has the event, the notifier has yet to record it
// as sent). The notifier daemon records it once MariaDB is back, within
// seconds, and sends it no second time.
func TestWebhookOnceAcrossMariaDBKill(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	// Mostly waiting (on its own MariaDB, the notifier): beside the other waiting tests.
	t.Parallel()
	ctx := context.Background()
	db := startKillableMariaDB(t)
	stateDSN := db.newDatabase(t, "state")
	root := t.TempDir()
	e, id := webhookEngine(t, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: "mysql://" + stateDSN})
	hook := &eventCounter{got: map[int64]int{}}
	restarted := make(chan error, 1)
	var once sync.Once
	serveWebhook(t, e, id, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook.ServeHTTP(w, r)
		// The first call kills MariaDB before it is answered; MariaDB is
		// back 3 s later.
		once.Do(func() {
			if err := db.kill(); err != nil {
				restarted <- err
				return
			}
			go func() {
				time.Sleep(3 * time.Second)
				restarted <- db.start()
			}()
		})
	}))
	b := &benchEnv{tb: t, ctx: ctx, e: e, u: store.User{ID: id, Name: "alice"}}
	b.submit(b.request("g", 1, 2))
	evs, err := e.Query().Events(ctx, id, 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("no event to send (%v)", err)
	}

	var log syncBuffer
	cmd := exec.Command(serverExe, "notifier", "--root", root)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	select {
	case err := <-restarted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the notifier sent nothing; its log:\n%s", log.String())
	}
	// Recorded within seconds of MariaDB's return (the claim of a
	// delivery whose record was lost ends after 90 s: then it goes again).
	if !polled(30*time.Second, func() bool {
		n, _, err := e.State().OutboxWaiting(ctx)
		return err == nil && n == 0
	}) {
		n, _, _ := e.State().OutboxWaiting(ctx)
		t.Errorf("%d notifications still waiting 30 s after MariaDB came back; notifier's log:\n%s", n, log.String())
	}
	got := hook.counts()
	for _, ev := range evs {
		if got[ev.ID] != 1 {
			t.Errorf("event %d (%s) delivered %d times, want once", ev.ID, ev.Type, got[ev.ID])
		}
	}
}

// killableMariaDB is a private MariaDB a test kills -9 and starts again on
// the same data directory and socket.
type killableMariaDB struct {
	dir string
	mu  sync.Mutex
	srv *mariadbtest.Server
}

// startKillableMariaDB starts one for t (skipping t without MariaDB); it is
// stopped and removed when t ends.
func startKillableMariaDB(t *testing.T) *killableMariaDB {
	t.Helper()
	dir, err := os.MkdirTemp("", "rbkill")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := &killableMariaDB{dir: dir}
	if db.srv, err = mariadbtest.Start(context.Background(), dir); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { db.mu.Lock(); db.srv.Stop(); db.mu.Unlock() })
	return db
}

func (db *killableMariaDB) newDatabase(t *testing.T, name string) string {
	t.Helper()
	db.mu.Lock()
	defer db.mu.Unlock()
	dsn, err := db.srv.NewDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func (db *killableMariaDB) kill() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.srv.Kill()
}

func (db *killableMariaDB) start() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	srv, err := mariadbtest.Start(context.Background(), db.dir)
	if err == nil {
		db.srv = srv
	}
	return err
}
