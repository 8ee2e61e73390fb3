package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
)

// TestMain lets the test binary be the master itself, for the tests that
// kill it.
func TestMain(m *testing.M) {
	if os.Getenv("ADAPTIVE_MASTER_CHILD") == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	os.Exit(code)
}

var starts = []string{"-coor", "../langevin/input.coor", "-vel", "../langevin/input.vel"}

// stateFile is the master's state file as the tests read it.
type stateFile struct {
	LastID int64    `json:"last_event_id"`
	Data   progress `json:"data"`
}

func readState(t *testing.T, path string) (stateFile, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return stateFile{}, false
	}
	var st stateFile
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("state file: %v\n%s", err, b) // written atomically: never partial
	}
	return st, true
}

// checkBack: every work unit w00000..w<target-1> came back exactly once.
func checkBack(t *testing.T, back []record, target int) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range back {
		seen[r.Name]++
	}
	for i := range target {
		if seen[name(i)] != 1 {
			t.Errorf("%s came back %d times", name(i), seen[name(i)])
		}
	}
	if len(back) != target {
		t.Errorf("%d records, want %d", len(back), target)
	}
}

// TestRunsToTarget: the example master, on the stand-in, keeps its work
// units in flight until the target, each result taken once, each new work
// unit started from the best result so far.
func TestRunsToTarget(t *testing.T) {
	// A server of its own, mostly waited on: beside the other test.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{})
	tok, err := s.AddUser("scientist")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"-url", s.URL, "-token", tok, "-dir", dir, "-inflight", "3", "-target", "12"}, starts...)
	if err := run(ctx, args, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !regexp.MustCompile(`(?m)^done: 12 work units came back; the lowest energy [0-9.]+ is w[0-9]{5}'s`).MatchString(out.String()) {
		t.Errorf("output:\n%s", out.String())
	}
	st, _ := readState(t, filepath.Join(dir, "master.state"))
	checkBack(t, st.Data.Back, 12)
	if st.Data.Submitted != 12 {
		t.Errorf("submitted %d, want 12", st.Data.Submitted)
	}
	// The best is the lowest of all, and the work units did not all
	// compute the same (each has its own seed).
	energies := map[float64]bool{}
	for _, r := range st.Data.Back {
		energies[r.Energy] = true
		if r.Energy < st.Data.Back[st.Data.Best].Energy {
			t.Errorf("%s's energy %f is below the best's", r.Name, r.Energy)
		}
	}
	if len(energies) < 6 {
		t.Errorf("only %d distinct energies in 12 work units", len(energies))
	}
	m, err := master.Connect(ctx, s.URL, tok, master.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := m.Counts(ctx, "adaptive"); err != nil || n[master.StateFinished] != 12 || len(n) != 1 {
		t.Errorf("counts %v, %v; want 12 finished", n, err)
	}
	// Started again once done, it has nothing more to do.
	out.Reset()
	if err := run(ctx, args, &out); err != nil || !strings.HasPrefix(out.String(), "done: 12") {
		t.Errorf("second run: %v\n%s", err, out.String())
	}
}

// TestKilledAndRestarted: the master, a real process, killed with SIGKILL
// in the middle of its run and started again, takes every result into
// account exactly once, and gets no acknowledged event again.
func TestKilledAndRestarted(t *testing.T) {
	// A server of its own, mostly waited on: beside the other test.
	t.Parallel()
	s := standinserver.Start(t, standinserver.Options{})
	tok, err := s.AddUser("scientist")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const target = 30
	args := append([]string{"-url", s.URL, "-token", tok, "-dir", dir, "-inflight", "4", "-target", strconv.Itoa(target)}, starts...)
	start := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "ADAPTIVE_MASTER_CHILD=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	state := filepath.Join(dir, "master.state")
	first, out1 := start()
	deadline := time.Now().Add(time.Minute)
	for {
		if st, ok := readState(t, state); ok && len(st.Data.Back) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			first.Wait()
			t.Fatalf("the master did not get going:\n%s", out1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	first.Wait()
	killed, _ := readState(t, state)
	if len(killed.Data.Back) >= target {
		t.Fatalf("the master had finished before it was killed (%d back)", len(killed.Data.Back))
	}
	t.Logf("killed with %d of %d back, events acknowledged up to %d", len(killed.Data.Back), target, killed.LastID)

	second, out2 := start()
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the restarted master: %v\n%s", err, out2)
		}
	case <-time.After(2 * time.Minute):
		second.Process.Kill()
		<-done // its output is written until it has exited
		t.Fatalf("the restarted master did not finish:\n%s", out2)
	}
	final, _ := readState(t, state)
	checkBack(t, final.Data.Back, target)
	// Nothing acknowledged before the kill came again.
	for _, line := range strings.Split(out2.String(), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "result" || f[0] == "failure") {
			id, _ := strconv.ParseInt(f[1], 10, 64)
			if id <= killed.LastID {
				t.Errorf("event %d, acknowledged before the kill (up to %d), came again: %s", id, killed.LastID, line)
			}
		}
	}
	if !strings.Contains(out2.String(), fmt.Sprintf("done: %d work units came back", target)) {
		t.Errorf("second run:\n%s", out2)
	}
}
