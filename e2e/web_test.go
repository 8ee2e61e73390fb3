package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// rbget USER PATH: GET $RBOINC_URL's server PATH (from /rboinc_cgi on) with
// HTTP Basic as USER (their token from rbuser; "-" for no credentials);
// prints "status N" and the body. Fails on a transport error only.
func cmdGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: rbget USER PATH")
	}
	base := strings.TrimSuffix(ts.Getenv("RBOINC_URL"), "/rboinc_cgi")
	req, err := http.NewRequest("GET", base+args[1], nil)
	ts.Check(err)
	if args[0] != "-" {
		req.SetBasicAuth(args[0], ts.Getenv("TOKEN_"+strings.ToUpper(args[0])))
	}
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Fprintf(ts.Stdout(), "status %d\n%s", resp.StatusCode, b)
	if h := resp.Header.Get("WWW-Authenticate"); h != "" {
		fmt.Fprintf(ts.Stdout(), "\nWWW-Authenticate: %s\n", h)
	}
}
