package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// get fetches a page with HTTP Basic as user ("" for none).
func (v *env) basic(user, path string) answer {
	v.t.Helper()
	req, _ := http.NewRequest("GET", v.srv.URL+path, nil)
	if user != "" {
		req.SetBasicAuth(user, v.tokens[user])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), hdr: resp.Header}
}

// TestStatusPages: the pages need credentials, show the user's own
// chains only, a failed chain's reason, and link finished outputs to a
// download that works with the same credentials.
func TestStatusPages(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	resp := v.submit("alice", "g1", "c1", 2)
	v.submit("alice", "g1", "c2", 2)
	v.submit("bob", "bobgroup", "b1", 1)
	v.finish(resp.Chains[0].FirstWU)
	alice, _ := v.db.UserByName(ctx, "alice")
	cs, _ := v.db.Chains(ctx, alice.ID, "g1", "c2")
	if err := v.db.FailChain(ctx, cs[0].ID, 0, "the <b>app</b> crashed"); err != nil {
		t.Fatal(err)
	}

	for _, p := range []string{"/rboinc_cgi/status/", "/rboinc_cgi/status/g1", "/rboinc_cgi/status/g1/c1", "/rboinc_cgi/status"} {
		a := v.basic("", p)
		if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.hdr.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s without credentials: %d %q", p, a.status, a.hdr.Get("WWW-Authenticate"))
		}
		if strings.Contains(a.body, "g1") {
			t.Errorf("%s without credentials shows the group", p)
		}
	}
	a := v.basic("alice", "/rboinc_cgi/status/")
	if a.status != 200 || !strings.Contains(a.body, `data-group="g1" data-done="1" data-steps="4"`) {
		t.Fatalf("overview: %v", a)
	}
	if strings.Contains(a.body, "bobgroup") || strings.Contains(a.body, v.tokens["alice"]) {
		t.Fatal("the overview shows bob's group or alice's token")
	}
	if !strings.Contains(a.body, "the &lt;b&gt;app&lt;/b&gt; crashed") || strings.Contains(a.body, "<b>app") {
		t.Fatalf("the failure reason is missing or not escaped:\n%s", a.body)
	}
	if n := len(regexp.MustCompile(`<rect class="bar"`).FindAllString(a.body, -1)); n != 9+24 {
		t.Fatalf("%d bars in the charts, want 33", n)
	}
	if !strings.Contains(a.body, `<meta http-equiv="refresh"`) || !strings.Contains(a.body, `name="viewport"`) {
		t.Fatal("no refresh or viewport")
	}
	// Bob cannot see alice's group or chain, even by its address.
	for _, p := range []string{"/rboinc_cgi/status/g1", "/rboinc_cgi/status/g1/c1"} {
		if a := v.basic("bob", p); a.status != http.StatusNotFound || strings.Contains(a.body, "c1</a>") {
			t.Errorf("bob at %s: %d", p, a.status)
		}
	}
	a = v.basic("alice", "/rboinc_cgi/status/g1/c1")
	m := regexp.MustCompile(`href="(/rboinc_cgi/api/v1/files/g1/[^"]+)"`).FindStringSubmatch(a.body)
	if a.status != 200 || m == nil {
		t.Fatalf("chain page without a download link: %v", a)
	}
	if d := v.basic("alice", m[1]); d.status != 200 || d.body != "4 5 6\n" {
		t.Fatalf("download %s: %v", m[1], d)
	}
	if d := v.basic("bob", m[1]); d.status != http.StatusNotFound {
		t.Fatalf("bob downloads alice's output: %v", d)
	}
	if d := v.basic("", m[1]); d.status != http.StatusUnauthorized {
		t.Fatalf("download without credentials: %v", d)
	}
	a = v.basic("alice", "/rboinc_cgi/status/g1/c2")
	if !strings.Contains(a.body, `id="reason">the &lt;b&gt;app&lt;/b&gt; crashed`) {
		t.Fatalf("failed chain page without its reason:\n%s", a.body)
	}
	// The administrator's view is for administrators.
	if strings.Contains(a.body, "admin-users") {
		t.Fatal("alice sees the administrator's view")
	}
	if err := v.db.SetUserAdmin(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	a = v.basic("bob", "/rboinc_cgi/status/")
	if !strings.Contains(a.body, `id="admin-users"`) || !strings.Contains(a.body, "<td>alice") || !strings.Contains(a.body, "langevin") {
		t.Fatalf("bob's administrator view:\n%s", a.body)
	}
	if strings.Contains(a.body, "g1") {
		t.Fatal("the administrator's view lists alice's groups as bob's")
	}
}

// TestMetrics: administrators only (401 without credentials, 403 for
// others); every name is rboinc_; the figures are the database's.
func TestMetrics(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	resp := v.submit("alice", "g", "c", 2)
	v.finish(resp.Chains[0].FirstWU)
	v.call("alice", "GET", "/rboinc_cgi/api/v1/status?group=nosuch", nil) // a 404 to count
	if a := v.basic("", "/rboinc_cgi/metrics"); a.status != http.StatusUnauthorized || a.hdr.Get("WWW-Authenticate") == "" {
		t.Fatalf("without credentials: %v", a)
	}
	if a := v.basic("alice", "/rboinc_cgi/metrics"); a.status != http.StatusForbidden {
		t.Fatalf("a user who is not an administrator: %v", a)
	}
	if err := v.db.SetUserAdmin(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	a := v.basic("bob", "/rboinc_cgi/metrics")
	if a.status != 200 {
		t.Fatalf("administrator: %v", a)
	}
	for _, line := range strings.Split(a.body, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "rboinc_") {
			t.Errorf("a metric without the rboinc_ prefix: %s", line)
		}
	}
	var poolFiles, poolBytes int64
	v.db.SQL().QueryRow(`SELECT count(*), sum(size) FROM pool`).Scan(&poolFiles, &poolBytes)
	for _, want := range []string{
		fmt.Sprintf("rboinc_pool_files %d", poolFiles),
		fmt.Sprintf("rboinc_pool_bytes %d", poolBytes),
		`rboinc_chains{state="running"} 1`,
		`rboinc_steps_created_total 2`,
		`rboinc_steps_assimilated_total 1`,
		`rboinc_hook_seconds_count 1`,
		`rboinc_create_work_seconds_count 2`,
		`rboinc_http_request_errors_total{endpoint="GET /rboinc_cgi/api/v1/status"} 1`,
		`rboinc_http_requests_total{code="403",endpoint="GET /rboinc_cgi/metrics"} 1`,
		`rboinc_scrape_error 0`,
	} {
		if !strings.Contains(a.body, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(a.body)
	}
}

// TestProgressEndpoint: each of the user's groups, its steps and states;
// another user's group is not found.
func TestProgressEndpoint(t *testing.T) {
	v := newEnv(t)
	resp := v.submit("alice", "g1", "c1", 3)
	v.submit("alice", "g2", "c2", 1)
	v.submit("bob", "bobs", "b", 1)
	v.finish(resp.Chains[0].FirstWU)
	a := v.call("alice", "GET", "/rboinc_cgi/api/v1/progress", nil)
	if !a.ok() || !strings.Contains(a.body, `"group":"g1","chains":1,"states":{"running":1},"steps_done":1,"steps":3,"remaining":2,"rate_per_hour":`) ||
		!strings.Contains(a.body, `"group":"g2"`) || strings.Contains(a.body, "bobs") {
		t.Fatalf("progress: %v", a)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi/api/v1/progress?group=bobs", nil); a.status != http.StatusNotFound {
		t.Fatalf("bob's group: %v", a)
	}
	if a := v.call("", "GET", "/rboinc_cgi/api/v1/progress", nil); a.status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %v", a)
	}
}
