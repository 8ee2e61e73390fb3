package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const childEnv = "RBOINC_STORE_TEST_CHILD" // the database a child process opens

// TestConcurrentProcessesMigrateOnce: processes opening a database of the
// previous release at the same moment (CGI requests, the hook, the creator
// after an upgrade) all succeed, and exactly one of them applies the
// migrations. Each process is this test binary again, released together.
func TestConcurrentProcessesMigrateOnce(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		openAsChild(t, path)
		return
	}
	ctx := context.Background()
	path, _ := loadFixture(t)
	dir := t.TempDir()
	const n = 6
	outs := make([]strings.Builder, n)
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcessesMigrateOnce$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+path, "RBOINC_STORE_TEST_BARRIER="+dir, fmt.Sprintf("RBOINC_STORE_TEST_ID=%d", i))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	// Let them all go at once, when every one has started.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		if len(ready) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d processes started", len(ready), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	applied, appliers := 0, 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
		_, after, ok := strings.Cut(outs[i].String(), "applied=")
		k, err := strconv.Atoi(strings.Fields(after + " x")[0])
		if !ok || err != nil {
			t.Fatalf("process %d said:\n%s", i, outs[i].String())
		}
		applied += k
		if k > 0 {
			appliers++
		}
	}
	if applied != SchemaVersion() || appliers != 1 {
		t.Fatalf("%d migrations applied by %d processes, want %d by one", applied, appliers, SchemaVersion())
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if h, err := db.History(ctx); err != nil || len(h) != SchemaVersion() {
		t.Fatalf("history after concurrent opens: %+v %v", h, err)
	}
}

// openAsChild is one of the processes: it waits for the others, opens the
// database, reads from it and says how many migrations it applied.
func openAsChild(t *testing.T, path string) {
	dir := os.Getenv("RBOINC_STORE_TEST_BARRIER")
	if err := os.WriteFile(filepath.Join(dir, "ready-"+os.Getenv("RBOINC_STORE_TEST_ID")), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never told to go")
		}
	}
	ctx := context.Background()
	db, rep, err := openWith(ctx, path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Chains(ctx, 1, "g", ""); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("applied=%d\n", len(rep.Applied))
}
