package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// changeServer answers -abort as a server whose BOINC refused the cancel,
// and -extend with the steps it was asked for.
func changeServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cgi" + wire.PathStatus:
			json.NewEncoder(w).Encode(wire.StatusResponse{Chains: []wire.ChainStatus{{Group: "g", Name: "a", State: wire.StateRunning, NumSteps: 5}}})
		case "/cgi" + wire.PathAbort:
			failed := "BOINC did not cancel the 1 work unit(s) in progress: they may still run"
			json.NewEncoder(w).Encode(wire.CountResponse{Count: 1, Message: "aborted 1 chain(s); but " + failed, Failed: failed})
		case "/cgi" + wire.PathExtend:
			var req wire.ExtendRequest
			json.NewDecoder(r.Body).Decode(&req)
			json.NewEncoder(w).Encode(wire.CountResponse{Count: 1, Message: "extended by " + strconv.Itoa(req.Steps)})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(wire.Error{Error: "no such group", Code: wire.CodeNotFound})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/cgi"
}

// TestAbortCancelRefusedExitsFailure: an abort whose cancel BOINC refused
// is a failure (exit 1, "any other failure"), not a success message.
func TestAbortCancelRefusedExitsFailure(t *testing.T) {
	base := []string{"-url", changeServer(t), "-authenticator", "t", "-group", "g", "-abort", "-yes"}
	out, code := runApp(t, base...)
	if code != client.ExitFailure || !strings.Contains(out, "BOINC did not cancel") {
		t.Fatalf("abort with the cancel refused: exit %d, %q; want exit %d and the failure said", code, out, client.ExitFailure)
	}
	out, code = runApp(t, append(base, "-json")...)
	var got struct {
		Count    int    `json:"count"`
		Failed   string `json:"failed"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != client.ExitFailure || got.ExitCode != client.ExitFailure || got.Failed == "" || got.Count != 1 {
		t.Fatalf("-json abort with the cancel refused: exit %d, %s (%v); want one JSON object with failed and exit_code %d", code, out, err, client.ExitFailure)
	}
}

// TestExtendBoundIsTheServers: -extend takes what the server takes.
func TestExtendBoundIsTheServers(t *testing.T) {
	base := []string{"-url", changeServer(t), "-authenticator", "t", "-group", "g", "-yes", "-extend"}
	if out, code := runApp(t, append(base, strconv.Itoa(wire.MaxChainSteps))...); code != client.ExitOK || !strings.Contains(out, "extended by 1000000") {
		t.Fatalf("-extend %d: exit %d, %q", wire.MaxChainSteps, code, out)
	}
	if _, code := runApp(t, append(base, strconv.Itoa(wire.MaxChainSteps+1))...); code != client.ExitUsage {
		t.Fatalf("-extend %d: exit %d, want %d", wire.MaxChainSteps+1, code, client.ExitUsage)
	}
}
