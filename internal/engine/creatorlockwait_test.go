package engine_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
)

// chainState is chain name of group g's state, with its error if any.
func (f *fixture) chainState(name string) string {
	f.t.Helper()
	cs, err := f.e.State().Chains(f.ctx, f.u.ID, "g", name)
	if err != nil || len(cs) != 1 {
		f.t.Fatalf("chain %s: %v, %d found", name, err, len(cs))
	}
	if cs[0].Error != "" {
		return cs[0].State + ": " + cs[0].Error
	}
	return cs[0].State
}

// TestCreatorLockWaitTimeoutFailsNoChain: recording a created step queued
// meets MariaDB's "Lock wait timeout exceeded" (1205: another process held
// the state database's write lock longer than innodb_lock_wait_timeout).
// That is the database's moment, not the step's: the pass fails, the next
// one records the work unit BOINC holds, and the chain goes on. Before,
// the creator failed the chain with the error as its reason (seen in the
// soak, 2026-12-06: "creating work unit c1-SOAK2_k00001-77-100-RND0397:
// state database: taking the write lock: Error 1205 (HY000): Lock wait
// timeout exceeded").
//
// The lock is real: another connection holds the write lock's row, on a
// private MariaDB whose innodb_lock_wait_timeout is one second.
func TestCreatorLockWaitTimeoutFailsNoChain(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	t.Parallel()
	ctx := context.Background()
	db := startKillableMariaDB(t)
	stateDSN := db.newDatabase(t, "state")
	other, err := sql.Open("mysql", stateDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// root over the socket (no password): the engine's connections, made
	// after, wait one second for a lock.
	admin, err := sql.Open("mysql", "root@unix("+db.srv.Socket+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("SET GLOBAL innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	testbin.Preinstall(root, serverExe)
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1", StateDB: "mysql://" + stateDSN}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	id, err := e.State().AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, root: root, e: e, u: store.User{ID: id, Name: "alice"}}

	wu0 := f.submit("g", "c1", 3).Chains[0].FirstWU
	release := f.holdCreator()
	if err := hookCall(ctx, e, boinc.HookCall{WUName: wu0, Files: f.outputs(wu0)}); err != nil {
		t.Fatal(err)
	}
	f.intake(1)
	release()
	c, _, err := e.State().StepByWU(ctx, wu0)
	if err != nil {
		t.Fatal(err)
	}
	next, err := e.State().StepOf(ctx, c, 1)
	if err != nil || next.State != "pending" {
		t.Fatalf("the next step: %+v, %v; want it pending", next, err)
	}

	// Between create_work and the step's record, another connection takes
	// the write lock for twice the lock wait timeout: the record waits in
	// vain (1205); what comes after it gets the lock.
	held := make(chan error, 1)
	e.SetAfterCreateSteps(func() {
		tx, err := other.BeginTx(ctx, nil)
		if err == nil {
			_, err = tx.Exec("SELECT version FROM rboinc_schema WHERE id = 1 FOR UPDATE")
		}
		if err != nil {
			held <- err
			return
		}
		go func() {
			time.Sleep(2 * time.Second)
			held <- tx.Rollback()
		}()
	})
	_, err = e.CreatePending(ctx)
	if herr := <-held; herr != nil {
		t.Fatal(herr)
	}
	if got := f.chainState("c1"); got != "running" {
		t.Fatalf("chain after the lock wait timeout: %s; want it running", got)
	}
	if err == nil || !strings.Contains(err.Error(), "Lock wait timeout") {
		t.Fatalf("CreatePending: %v; want the pass to fail on the lock wait timeout (the test's window was missed)", err)
	}
	if f.boincWUs(next.WU) != 1 {
		t.Fatalf("work unit %s: not in BOINC after create_work", next.WU)
	}

	// The next pass records the work unit BOINC holds: once, queued.
	if _, err := e.CreatePending(ctx); err != nil {
		t.Fatalf("the next pass: %v", err)
	}
	if s, err := e.State().StepOf(ctx, c, 1); err != nil || s.State != "queued" {
		t.Fatalf("the next step after the next pass: %+v, %v; want it queued", s, err)
	}
	if got := f.chainState("c1"); got != "running" {
		t.Fatalf("chain: %s; want it running", got)
	}
	if n := f.boincWUs(next.WU); n != 1 {
		t.Fatalf("%d work units %s in BOINC, want 1", n, next.WU)
	}
}
