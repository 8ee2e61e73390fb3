package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// A path outside the API (a wrong base URL) gets a 404 that says where the
// API is, in words and in wire.HeaderAPIBase; paths inside the API keep the
// router's answers.
func TestUnknownPathNamesTheAPI(t *testing.T) {
	v := newEnv(t)
	host := strings.TrimPrefix(v.srv.URL, "http://")
	for _, p := range []string{"/wrong/api/v1/status", "/api/v1/status", "/"} {
		a := v.call("alice", "GET", p, nil)
		if a.status != http.StatusNotFound || a.err.Code != wire.CodeNotFound || a.hdr.Get(wire.HeaderAPIBase) != "/rboinc_cgi" ||
			!strings.Contains(a.err.Error, "its API is at http://"+host+"/rboinc_cgi") {
			t.Errorf("GET %s: %s (header %q)", p, a, a.hdr.Get(wire.HeaderAPIBase))
		}
	}
	if a := v.call("alice", "GET", "/rboinc_cgi/api/v1/stop", nil); a.status != http.StatusMethodNotAllowed {
		t.Errorf("GET of a POST route: %s", a)
	}
	if a := v.call("alice", "GET", "/rboinc_cgi/api/v1/nosuch", nil); a.status != http.StatusNotFound || a.hdr.Get(wire.HeaderAPIBase) != "" {
		t.Errorf("an unknown path inside the API: %s", a)
	}
	if a := v.call("", "GET", "/rboinc_cgi", nil); a.status != http.StatusOK {
		t.Errorf("the liveness probe: %s", a)
	}
}
