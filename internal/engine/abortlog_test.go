package engine_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A chain the user aborted is logged as aborted when BOINC reports its
// cancelled work unit, never as a failed chain; a chain that does fail
// still warns.
func TestAbortedChainNotLoggedAsFailure(t *testing.T) {
	f := newFixture(t)
	f.e.Cfg.MaxStepAttempts = 1
	var logs bytes.Buffer
	f.e.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ab := f.submit("g", "ab", 2).Chains[0].FirstWU
	bad := f.submit("g", "bad", 2).Chains[0].FirstWU
	if _, err := f.e.Abort(f.ctx, f.u, wire.ChainRef{Group: "g", Name: "ab"}); err != nil {
		t.Fatal(err)
	}
	for wu, mask := range map[string]int{ab: 16, bad: 2} {
		if err := hookCall(f.ctx, f.e, boinc.HookCall{Error: true, ErrorMask: mask, WUName: wu, WUID: 3}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := f.e.Status(f.ctx, f.u, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, c := range st.Chains {
		states[c.Name] = c.State
	}
	if states["ab"] != wire.StateAborted || states["bad"] != wire.StateFailed {
		t.Fatalf("states %v, want ab aborted, bad failed", states)
	}
	var warned, aborted []string
	for line := range strings.Lines(logs.String()) {
		switch {
		case strings.Contains(line, `msg="chain failed"`):
			warned = append(warned, line)
		case strings.Contains(line, "chain aborted"):
			aborted = append(aborted, line)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "level=WARN") || !strings.Contains(warned[0], "chain=bad") {
		t.Errorf("chain failed logged %q, want once, WARN, for bad only", warned)
	}
	if len(aborted) != 1 || !strings.Contains(aborted[0], "level=INFO") || !strings.Contains(aborted[0], "chain=ab") {
		t.Errorf("chain aborted logged %q, want once at INFO for ab", aborted)
	}
}
