package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// eventsServer has no result to give, and two events: 6, chain c1 of g
// failed; 7, chain c2 of g failed.
func eventsServer(t *testing.T, calls *int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls++
		switch r.URL.Path {
		case "/cgi" + wire.PathWhoAmI:
			json.NewEncoder(w).Encode(wire.WhoAmI{User: "alice"})
		case "/cgi" + wire.PathResults:
			json.NewEncoder(w).Encode(wire.ResultsResponse{})
		case "/cgi" + wire.PathEvents:
			all := []wire.Event{{ID: 6, Type: "chain_failed", Group: "g", Name: "c1", Reason: "boom"}, {ID: 7, Type: "chain_failed", Group: "g", Name: "c2", Reason: "bang"}}
			after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
			if err != nil {
				after = -1
			}
			var evs []wire.Event
			for _, e := range all {
				if after >= 0 && e.ID > after {
					evs = append(evs, e)
				}
			}
			json.NewEncoder(w).Encode(wire.EventsResponse{Events: evs, LastID: 7})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(wire.Error{Error: "not here", Code: wire.CodeNotFound})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/cgi"
}

// runRetrieve runs rboinc-retrieve, its stdout and stderr apart.
func runRetrieve(args ...string) (stdout, stderr string, code int) {
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	code = clitool.Run(context.Background(), app, append([]string{prog}, args...))
	return out.String(), errOut.String(), code
}

// -into DIR leaves nothing in DIR when nothing was fetched: its lock and
// its events cursor are in the user's state directory. A cursor an older
// rboinc-retrieve left in DIR is carried over (the failures after it are
// reported once) and removed; two retrievals into one directory still
// exclude each other.
func TestIntoLeavesNothingBehind(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var calls int
	url := eventsServer(t, &calls)
	base := []string{"-url", url, "-authenticator", "t", "-group", "g"}
	dir := t.TempDir()
	legacy := filepath.Join(dir, ".rboinc-events-g")
	if err := os.WriteFile(legacy, []byte("6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runRetrieve(append(base, "-into", dir)...)
	if code != client.ExitOK || strings.Contains(stderr, "c1") || !strings.Contains(stderr, "chain c2 of group g failed: bang") {
		t.Fatalf("first retrieval after an older one: exit %d, stderr %q; want c2's failure alone (the old cursor is at 6)", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("nothing was fetched, yet the download directory holds %v", ents)
	}
	_, stderr, _ = runRetrieve(append(base, "-into", dir)...)
	if stderr != "" {
		t.Errorf("the second retrieval reports again: %q", stderr)
	}

	// A directory that is not there is not made for nothing.
	none := filepath.Join(t.TempDir(), "new", "dir")
	if _, stderr, code := runRetrieve(append(base, "-into", none)...); code != client.ExitOK {
		t.Fatalf("retrieval into a new directory: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(none); err == nil {
		t.Errorf("%s was made though nothing was fetched", none)
	}

	// Held by another retrieval (its lock in the state directory, or an
	// older rboinc-retrieve's in the directory): refused before asking
	// the server anything.
	canon, err := client.CanonicalDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{client.RetrieveLockPath(client.RetrieveStateDir(), canon), filepath.Join(dir, client.LockName)} {
		l, err := client.LockFile(path, dir)
		if err != nil {
			t.Fatal(err)
		}
		calls = 0
		_, _, code = runRetrieve(append(base, "-into", dir)...)
		l.Unlock()
		if code != client.ExitLocked || calls != 0 {
			t.Errorf("lock %s held: exit %d, %d requests; want exit %d, none", path, code, calls, client.ExitLocked)
		}
	}
}
