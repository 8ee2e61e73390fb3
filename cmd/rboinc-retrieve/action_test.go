package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// server answers status, stop, purge and an empty results list.
func server(t *testing.T, calls *[]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls = append(*calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		switch r.URL.Path {
		case "/cgi" + wire.PathStatus:
			json.NewEncoder(w).Encode(wire.StatusResponse{Chains: []wire.ChainStatus{
				{Group: "g", Name: "b", State: wire.StateRunning, StepsDone: 2, NumSteps: 5},
				{Group: "g", Name: "a", State: wire.StateDone, StepsDone: 5, NumSteps: 5},
			}})
		case "/cgi" + wire.PathGridStatus:
			json.NewEncoder(w).Encode(wire.GridStatusResponse{Groups: []wire.GroupGrid{
				{Group: "g", Chains: 2, Running: 1, Done: 1, Boinc: &wire.BoincCounts{WorkUnits: 7, InProgress: 1, Success: 6, Error: 1, Decided: 6, TurnaroundAvg: 5400}},
			}})
		case "/cgi" + wire.PathProgress:
			json.NewEncoder(w).Encode(wire.ProgressResponse{Groups: []wire.GroupProgress{
				{Group: "g", Chains: 2, States: map[string]int{"running": 1, "done": 1}, StepsDone: 7, Steps: 10, Remaining: 3, RatePerHour: 1.5, ETASeconds: 7200},
			}})
		case "/cgi" + wire.PathStop, "/cgi" + wire.PathPurge:
			json.NewEncoder(w).Encode(wire.CountResponse{Count: 2})
		case "/cgi" + wire.PathResults:
			if r.URL.Query().Get("group") == "broken" {
				// One file fails (its MD5 is not one), so the retrieval is partial.
				json.NewEncoder(w).Encode(wire.ResultsResponse{Files: []wire.ResultFile{{Group: "broken", Chain: "c", Name: "c-A_broken-0-1-RND0001_0", MD5: "x", Size: 1}}})
				return
			}
			if r.URL.Query().Get("group") != "g" {
				w.WriteHeader(http.StatusNotFound)
				json.NewEncoder(w).Encode(wire.Error{Error: "no such group", Code: wire.CodeNotFound})
				return
			}
			json.NewEncoder(w).Encode(wire.ResultsResponse{})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(wire.Error{Error: "no such group", Code: wire.CodeNotFound})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/cgi"
}

func runApp(t *testing.T, args ...string) (string, int) {
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	code := clitool.Run(context.Background(), app, append([]string{prog}, args...))
	return out.String(), code
}

func TestRetrieveActions(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var calls []string
	url := server(t, &calls)
	dir := t.TempDir()
	base := []string{"-url", url, "-authenticator", "t"}
	for _, tc := range []struct {
		args  []string
		want  int
		out   string
		calls int
	}{
		{[]string{"-status", "-group", "g"}, client.ExitOK, "b\t2\trunning\t5\na\t5\tdone\t5\n", 1},
		{[]string{"-status"}, client.ExitOK, "g/b\t2\trunning\t5\ng/a\t5\tdone\t5\n", 1},
		{[]string{"-purge", "-group", "g"}, client.ExitUsage, "", 0}, // no terminal, no -yes
		{[]string{"-purge", "-group", "g", "-into", dir, "-yes"}, client.ExitUsage, "", 0},
		{[]string{"-purge", "-group", "g", "-yes"}, client.ExitOK, "Purge: 2 chains affected.\n", 1},
		{[]string{"-stop", "-group", "g", "-name", "a", "-yes", "-json"}, client.ExitOK, "{\n  \"count\": 2\n}\n", 1},
		{[]string{"-name", "a"}, client.ExitUsage, "", 0},
		{[]string{}, client.ExitUsage, "", 0},
		{[]string{"-group", "g", "-into", dir, "-intotree", dir}, client.ExitUsage, "", 0},
		{[]string{"-group", "g", "-into", dir}, client.ExitOK, "", 3}, // stdout is not a terminal: quiet; then who the user is and the events, for failures since the last run
		{[]string{"-group", "nope", "-into", dir}, client.ExitRefused, "", 0},
		// The original's options, abbreviations and letter case.
		{[]string{"-gridstatus"}, client.ExitOK, gridHeader + "g\t2\t1\t1\t0\t0\t0\t1\t6\t1\t1.5\t0\n", 1},
		{[]string{"-GRID", "-json"}, client.ExitOK, "[\n  {\n    \"group\": \"g\",\n    \"chains\": 2,\n    \"running\": 1,\n    \"done\": 1,\n    \"failed\": 0,\n    \"stopped\": 0,\n    \"aborted\": 0,\n" +
			"    \"boinc\": {\n      \"work_units\": 7,\n      \"unsent\": 0,\n      \"in_progress\": 1,\n      \"success\": 6,\n      \"error\": 1,\n      \"decided\": 6,\n      \"turnaround_avg_s\": 5400\n    }\n  }\n]\n", 1},
		{[]string{"-stat", "-grou", "g", "-user", "x"}, client.ExitOK, "b\t2\trunning\t5\na\t5\tdone\t5\n", 1},
		{[]string{"-st", "-group", "g"}, client.ExitUsage, "", 0}, // -status or -stop?
	} {
		calls = nil
		out, code := runApp(t, append(base, tc.args...)...)
		if code != tc.want || out != tc.out || (tc.calls > 0 && len(calls) != tc.calls) || (tc.calls == 0 && tc.want == client.ExitUsage && len(calls) != 0) {
			t.Errorf("%v: exit %d, out %q, calls %v; want exit %d, out %q", tc.args, code, out, calls, tc.want, tc.out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("nothing was fetched, yet the download directory holds %v", ents)
	}
	canon, _ := client.CanonicalDir(dir)
	if _, err := os.Stat(client.RetrieveLockPath(client.RetrieveStateDir(), canon)); err != nil {
		t.Errorf("no lock file in the state directory: %v", err)
	}
}

// TestPartialFailureIsOneJSONDocument: with -json, a retrieval where some
// files failed prints one JSON object with the report, the error and the
// exit code, not the report followed by a second failure object.
func TestPartialFailureIsOneJSONDocument(t *testing.T) {
	var calls []string
	url := server(t, &calls)
	out, code := runApp(t, "-url", url, "-authenticator", "t", "-group", "broken", "-into", t.TempDir(), "-json")
	if code != client.ExitPartial {
		t.Fatalf("exit %d, want %d; out %s", code, client.ExitPartial, out)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	var got map[string]any
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Errorf("more than one JSON document on stdout:\n%s", out)
	}
	if got["exit_code"] != float64(client.ExitPartial) || got["error"] != "1 of 1 files failed to download" || got["total"] != float64(1) || got["failed"] == nil {
		t.Errorf("JSON answer %v", got)
	}
}

const gridHeader = "GROUP\tCHAINS\tRUNNING\tDONE\tFAILED\tSTOPPED\tUNSENT\tIN_PROGRESS\tSUCCESS\tERRORS\tTURNAROUND_H\tABORTED\n"

// TestGridStatusOldServer: a server without the grid status (404 from its
// router) gets the chain states counted from its status, BOINC's columns
// empty.
func TestGridStatusOldServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cgi"+wire.PathStatus {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(wire.StatusResponse{Chains: []wire.ChainStatus{
			{Group: "g", Name: "b", State: wire.StateRunning, StepsDone: 2, NumSteps: 5},
			{Group: "g", Name: "a", State: wire.StateDone, StepsDone: 5, NumSteps: 5},
			// Every chain in one state column: queued ones run, aborted
			// ones have their own.
			{Group: "g", Name: "c", State: wire.StateQueued, StepsDone: 0, NumSteps: 5},
			{Group: "g", Name: "d", State: wire.StateAborted, StepsDone: 1, NumSteps: 5},
		}})
	}))
	defer srv.Close()
	out, code := runApp(t, "-url", srv.URL+"/cgi", "-authenticator", "t", "-gridstatus")
	if code != client.ExitOK || out != gridHeader+"g\t4\t2\t1\t0\t0\t-\t-\t-\t-\t-\t1\n" {
		t.Errorf("exit %d, out %q", code, out)
	}
}
