package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

func TestPrescan(t *testing.T) {
	t.Setenv("RBOINC_URL", "http://env")
	t.Setenv("RBOINC_TOKEN", "envtok")
	got := prescan([]string{"-group", "g", "--app_name", "md", "-authenticator=tok", "-coor_file", "x", "--help"})
	want := preArgs{url: "http://env", token: "tok", app: "md", help: true}
	if got != want {
		t.Errorf("prescan = %+v, want %+v", got, want)
	}
	got = prescan([]string{"--url=http://x", "-verbose", "-h=false", "-app_name"})
	want = preArgs{url: "http://x", token: "envtok", verbose: true}
	if got != want {
		t.Errorf("prescan = %+v, want %+v", got, want)
	}
	// As the original's Getopt::Long: any case, unambiguous prefixes.
	got = prescan([]string{"-APP", "md", "-Verb", "-co", "x", "-he"})
	want = preArgs{url: "http://env", token: "envtok", app: "md", verbose: true}
	if got != want {
		t.Errorf("prescan = %+v, want %+v", got, want)
	}
	// The original clients' URL carries the token.
	t.Setenv("RBOINC_TOKEN", "")
	got = prescan([]string{"-url", "http://toni:tok@h/rboinc_cgi", "-app_name", "md"})
	want = preArgs{url: "http://h/rboinc_cgi", token: "tok", app: "md"}
	if got != want {
		t.Errorf("prescan = %+v, want %+v", got, want)
	}
}

func TestPrintParameters(t *testing.T) {
	q := &wire.Queue{Name: "md", Description: "Molecular dynamics", Application: "acemd", Parameters: []wire.Parameter{
		{Name: "pdb_file", Description: "Structure"},
		{Name: "coor_file", Description: "Coordinates", Optional: true},
	}}
	var b bytes.Buffer
	printParameters(&b, q)
	want := `Application queue "md": Molecular dynamics
BOINC application: acemd
Parameters:
  -coor_file FILE   (optional) Coordinates
  -pdb_file FILE    Structure
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestParamFlagsSkipClashes(t *testing.T) {
	q := &wire.Queue{Name: "md", Parameters: []wire.Parameter{{Name: "group"}, {Name: "a=b"}, {Name: "coor_file"}, {Name: "h"}}}
	flags := paramFlags(q, fixedFlags())
	if len(flags) != 1 || !reflect.DeepEqual(flags[0].Names(), []string{"coor_file"}) {
		t.Fatalf("flags %v", flags)
	}
}

// queueServer answers only the queue endpoints.
func queueServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cgi" + wire.PathQueues + "/md":
			json.NewEncoder(w).Encode(wire.Queue{Name: "md", Parameters: []wire.Parameter{{Name: "coor_file", Description: "Coordinates"}}})
		case "/cgi" + wire.PathQueues:
			json.NewEncoder(w).Encode([]wire.QueueSummary{{Name: "md"}, {Name: "qm"}})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(wire.Error{Error: "unknown queue", Code: wire.CodeUnknownQueue})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/cgi"
}

func TestConnectErrors(t *testing.T) {
	url := queueServer(t)
	ctx := context.Background()
	_, _, err := connect(ctx, preArgs{url: url, token: "t", app: "nope"})
	wantMsg := `unknown application queue "nope" on ` + url + "; available: md, qm"
	if client.ExitCode(err) != client.ExitRefused || err.Error() != wantMsg {
		t.Errorf("unknown queue: %v (exit %d)", err, client.ExitCode(err))
	}
	if _, _, err := connect(ctx, preArgs{url: url, token: "t"}); client.ExitCode(err) != client.ExitUsage {
		t.Errorf("no -app_name: %v", err)
	}
	if _, _, err := connect(ctx, preArgs{url: url, app: "md"}); client.ExitCode(err) != client.ExitUsage {
		t.Errorf("no token: %v", err)
	}
	if _, q, err := connect(ctx, preArgs{url: url, token: "t", app: "md"}); err != nil || q.Name != "md" {
		t.Errorf("connect = %v, %v", q, err)
	}
}

func TestRunUsageErrors(t *testing.T) {
	url := queueServer(t)
	dir := t.TempDir()
	coor := filepath.Join(dir, "x.coor")
	os.WriteFile(coor, []byte("x"), 0o644)
	jobs := filepath.Join(dir, "jobs")
	os.WriteFile(jobs, []byte("c1\n"), 0o644)
	base := []string{"rboinc-submit", "-url", url, "-authenticator", "t", "-app_name", "md"}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-help"}, client.ExitOK},
		{[]string{"-help_parameters"}, client.ExitOK},
		{[]string{"-group", "g", "-name", "c1"}, client.ExitUsage},                                    // missing -coor_file
		{[]string{"-group", "g", "-name", "c1", "-coor_file", coor + "x"}, client.ExitUsage},          // unreadable
		{[]string{"-group", "g", "-coor_file", coor}, client.ExitUsage},                               // no -name
		{[]string{"-group", "g", "-name", "c1", "-jobs", jobs, "-coor_file", coor}, client.ExitUsage}, // both
		{[]string{"-group", "g", "-name", "c1", "-bogus", "x"}, client.ExitUsage},
		{[]string{"-group", "g", "-name", "c1", "-coor_file", coor, "-num_steps", "0"}, client.ExitUsage},
		{[]string{"-group", "g", "-name", "c1", "-coor_file", coor, "-num_steps", "1000001"}, client.ExitUsage}, // wire.MaxChainSteps + 1
		{[]string{"-group", "g", "-name", "c1", "-coor_file", coor, "-num_steps", "1000000"}, client.ExitRefused},
		{[]string{"-group", "g", "-name", "c1", "-coor_file", coor}, client.ExitRefused}, // our server has no /pool/missing
		// The original's options, abbreviations and letter case.
		{[]string{"-gr", "g", "-na", "c1", "-coor", coor, "-dry", "-Num_Steps", "3"}, client.ExitRefused},
		{[]string{"-Group", "g", "-name", "c1", "-coor_file", coor, "-balance", "1", "-metadata_file", "m", "-user", "u", "-email", "e"}, client.ExitRefused},
		{[]string{"-group", "g", "-name", "c1", "-coor_file", coor, "-b", "1"}, client.ExitUsage}, // -balance or -batch?
	} {
		if got := run(context.Background(), append(base, tc.args...)); got != tc.want {
			t.Errorf("run %v = %d, want %d", tc.args, got, tc.want)
		}
	}
	t.Setenv("RBOINC_RETRIES", "1") // one retry, then the verdict
	if got := run(context.Background(), []string{"rboinc-submit", "-url", "http://127.0.0.1:1/x", "-authenticator", "t", "-app_name", "md"}); got != client.ExitUnreachable {
		t.Errorf("unreachable: exit %d", got)
	}
}

// TestPrintParametersWraps: every text of -help_parameters is wrapped to
// the width, whatever the queue's texts and numbers: no line is longer
// unless it is one word (a path is not cut), the parameters' texts stay in
// their column, and nothing is lost. The Failures paragraph with the
// server's limits ran to 130 columns, then broke before "18 times in all".
func TestPrintParametersWraps(t *testing.T) {
	long := "Run parameters: lines 'key value' for steps, dt, gamma, temperature, seed; and, to try failures: " +
		"'fail 1' fails every run, 'failtimes N FILE' fails the first N runs (counted in FILE, e.g. " +
		"../../a/very/long/relative/path/to/the/flaky.count/that/cannot/be/cut), 'sleep S' waits S seconds"
	q := &wire.Queue{Name: "md", Description: strings.Repeat("Molecular dynamics of a long description ", 4), Application: "acemd",
		Parameters: []wire.Parameter{
			{Name: "conf_file", Description: long, Optional: true},
			{Name: "pdb_file", Description: "Structure"},
			{Name: "a_parameter_with_a_very_long_name_indeed_file", Description: "Long name"},
		},
		Tries: &wire.Tries{MaxErrorResults: 5, MaxTotalResults: 10, MaxStepAttempts: 3}}
	for _, width := range []int{20, 40, 79} {
		var b bytes.Buffer
		printParametersWidth(&b, q, width)
		out := b.String()
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			// A parameter's name is the one thing allowed past the width.
			if f := strings.Fields(l); utf8.RuneCountInString(l) > width && len(f) > 1 && !(len(f) == 2 && f[1] == "FILE") {
				t.Errorf("width %d: line of %d columns: %q", width, utf8.RuneCountInString(l), l)
			}
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, want := range []string{strings.Join(strings.Fields(long), " "), "Failures: BOINC runs each step's work unit up to 6 times (the server's max_error_results 5, max_total_results 10), sending it",
			"up to 3 work units per step (-max_attempts asks for fewer), and then the chain fails. A step whose application always fails runs 18 times in all."} {
			if !strings.Contains(flat, want) {
				t.Errorf("width %d: %q lost in\n%s", width, want, out)
			}
		}
	}
	// At 79 columns the descriptions keep their column, the long name
	// standing on its own line above its text.
	var b bytes.Buffer
	printParametersWidth(&b, q, 79)
	if !strings.Contains(b.String(), "\n  -a_parameter_with_a_very_long_name_indeed_file FILE\n                    Long name\n") ||
		!strings.Contains(b.String(), "\n  -pdb_file FILE    Structure\n") ||
		!strings.Contains(b.String(), "\n  -conf_file FILE   (optional) Run parameters: lines 'key value' for steps, dt,\n                    gamma,") {
		t.Errorf("columns:\n%s", b.String())
	}
}
