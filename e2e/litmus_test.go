package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// Both WebDAV areas, the built-in one and Apache's mod_dav, must pass every
// litmus test: a failure, or a test skipped because another failed, fails
// the script.

var (
	litmusSuiteRE = regexp.MustCompile("^-> running `([a-z]+)'")
	litmusTestRE  = regexp.MustCompile(`^\s*(\d+)\. ([A-Za-z0-9_]+)`)
	// The outcome follows the dots that pad a test's name, or a single
	// space when the name fills the column.
	litmusResultRE = regexp.MustCompile(`(?:\.+ | )(pass|FAIL|SKIPPED)\b(.*)$`)
)

// litmusResult is one test's outcome: "pass", "FAIL" or "SKIPPED", and
// litmus's explanation of a failure.
type litmusResult struct{ outcome, detail string }

// parseLitmus reads litmus's progress output (lines overwritten with
// carriage returns) into "suite/index name" -> result; a test that started
// but has no outcome the parser understands is "unknown".
func parseLitmus(out string) map[string]litmusResult {
	res := map[string]litmusResult{}
	var suite, test string
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if m := litmusSuiteRE.FindStringSubmatch(line); m != nil {
			suite = m[1]
			continue
		}
		if m := litmusTestRE.FindStringSubmatch(line); m != nil {
			test = suite + "/" + m[1] + " " + m[2]
			if _, seen := res[test]; !seen {
				res[test] = litmusResult{"unknown", "no outcome found in litmus's output"}
			}
		}
		if m := litmusResultRE.FindStringSubmatch(line); m != nil && test != "" {
			res[test] = litmusResult{m[1], strings.TrimSpace(m[2])}
		}
	}
	return res
}

// rblitmus USER: run the litmus WebDAV test suite against USER's scratch
// area (token from TOKEN_<USER>) and fail on any failure not known for
// this deployment; every outcome is logged.
func cmdLitmus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: rblitmus USER")
	}
	user, tok := args[0], ts.Getenv("TOKEN_"+strings.ToUpper(args[0]))
	host := strings.TrimSuffix(ts.Getenv("RBOINC_URL"), "/rboinc_cgi")
	dav := host + "/DAV/" + user + "/"
	// The user's own collection exists once they uploaded anything; make
	// it now (an existing one answers 405).
	req, _ := http.NewRequest("MKCOL", dav, nil)
	req.SetBasicAuth(user, tok)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	cmd := exec.Command("litmus", "-k", dav, user, tok)
	cmd.Dir = ts.Getenv("WORK")
	out, err := cmd.CombinedOutput()
	if err != nil {
		ts.Fatalf("litmus: %v\n%s", err, out)
	}
	res := parseLitmus(string(out))
	if len(res) < 100 { // litmus 0.13 has 104 tests in its five suites
		ts.Fatalf("litmus ran only %d tests:\n%s", len(res), out)
	}
	count := map[string]int{}
	var failed, skipped, unexpected []string
	for name, r := range res {
		count[r.outcome]++
		switch r.outcome {
		case "FAIL":
			unexpected = append(unexpected, name)
			failed = append(failed, fmt.Sprintf("%s: %s", name, r.detail))
		case "SKIPPED":
			skipped = append(skipped, name)
			unexpected = append(unexpected, name)
		case "unknown":
			unexpected = append(unexpected, name)
		}
	}
	sort.Strings(failed)
	sort.Strings(skipped)
	ts.Logf("litmus against %s (%s): %d passed, %d failed, %d skipped, %d without a readable outcome", dav, ts.Getenv("RBOINC_E2E_MODE"), count["pass"], count["FAIL"], count["SKIPPED"], count["unknown"])
	for _, f := range failed {
		ts.Logf("litmus FAIL %s", f)
	}
	if len(skipped) > 0 {
		ts.Logf("litmus SKIPPED (they depend on a failed test): %s", strings.Join(skipped, ", "))
	}
	if len(unexpected) > 0 {
		sort.Strings(unexpected)
		ts.Fatalf("litmus tests failed or skipped: %v\n%s", unexpected, out)
	}
}

func TestParseLitmus(t *testing.T) {
	out := "-> running `locks':\n 0. init..................\r 0. init.................. pass\n" +
		"\r18. cond_put_corrupt_token WARNING: PUT failed with 412 not 423\n    ...................... pass (with 1 warning)\n" +
		"    ...................... \r19. complex_cond_put...... pass\n" +
		"20. fail_complex_cond_put.\r20. fail_complex_cond_put. FAIL (PUT with complex bogus conditional should fail with 412: 201 Created)\n" +
		"24. notowner_modify.......\r24. notowner_modify....... SKIPPED\n" +
		"22. fail_cond_put_unlocked \r22. fail_cond_put_unlocked pass\n" +
		"25. notowner_lock......... \n"
	got := parseLitmus(out)
	want := map[string]string{"locks/0 init": "pass", "locks/18 cond_put_corrupt_token": "pass", "locks/19 complex_cond_put": "pass",
		"locks/20 fail_complex_cond_put": "FAIL", "locks/24 notowner_modify": "SKIPPED",
		"locks/22 fail_cond_put_unlocked": "pass", "locks/25 notowner_lock": "unknown"}
	if len(got) != len(want) {
		t.Fatalf("parsed %v", got)
	}
	for k, v := range want {
		if got[k].outcome != v {
			t.Errorf("%s: %q, want %q", k, got[k].outcome, v)
		}
	}
	if !strings.Contains(got["locks/20 fail_complex_cond_put"].detail, "412") {
		t.Errorf("detail %q", got["locks/20 fail_complex_cond_put"].detail)
	}
}
