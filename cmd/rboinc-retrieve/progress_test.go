package main

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestStatusOnTerminal: on a terminal -status draws each group's progress
// bar and ETA above the chains' lines, which stay as they are; piped
// (TestRetrieveActions) it prints the lines alone.
func TestStatusOnTerminal(t *testing.T) {
	defer func(f func() bool) { stdoutTerminal = f }(stdoutTerminal)
	stdoutTerminal = func() bool { return true }
	var calls []string
	url := server(t, &calls)
	out, code := runApp(t, "-url", url, "-authenticator", "t", "-status", "-group", "g")
	lines := strings.Split(out, "\n")
	if code != client.ExitOK || len(lines) != 5 {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	bar := lines[0]
	full, empty := strings.Count(bar, "█"), strings.Count(bar, "░")
	if !strings.HasPrefix(bar, "g ") || full+empty < 10 || math.Abs(float64(full)/float64(full+empty)-0.7) > 0.05 ||
		!strings.Contains(bar, " 70.0%  7/10 steps  1 running, 1 done  ETA 2h 0m") {
		t.Fatalf("progress line %q", bar)
	}
	if strings.Join(lines[1:], "\n") != "\nb\t2\trunning\t5\na\t5\tdone\t5\n" {
		t.Fatalf("the chains' lines changed on a terminal:\n%s", out)
	}
	// One chain: its line alone, no bar.
	out, _ = runApp(t, "-url", url, "-authenticator", "t", "-status", "-group", "g", "-name", "a")
	if strings.Contains(out, "█") {
		t.Fatalf("a bar for one chain:\n%s", out)
	}
}

// TestStatusOnTerminalOldServer: a server without the progress endpoint
// gives the lines alone.
func TestStatusOnTerminalOldServer(t *testing.T) {
	defer func(f func() bool) { stdoutTerminal = f }(stdoutTerminal)
	stdoutTerminal = func() bool { return true }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cgi"+wire.PathStatus {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(wire.StatusResponse{Chains: []wire.ChainStatus{{Group: "g", Name: "a", State: "done", StepsDone: 1, NumSteps: 1}}})
	}))
	defer srv.Close()
	out, code := runApp(t, "-url", srv.URL+"/cgi", "-authenticator", "t", "-status", "-group", "g")
	if code != client.ExitOK || out != "a\t1\tdone\t1\n" {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

func TestPrintProgressBounds(t *testing.T) {
	var b bytes.Buffer
	printProgress(&b, []wire.GroupProgress{
		{Group: "empty"},
		{Group: "almost", StepsDone: 999, Steps: 1000, Remaining: 1},
		{Group: "all", StepsDone: 4, Steps: 4},
	}, 200)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || strings.Count(lines[0], "█") != 0 || strings.Count(lines[1], "░") != 1 || strings.Count(lines[2], "░") != 0 ||
		!strings.Contains(lines[0], "nothing left to run") || !strings.Contains(lines[1], "ETA unknown") {
		t.Fatalf("progress:\n%s", b.String())
	}
}
