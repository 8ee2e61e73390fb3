package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestIsolationMatrix: every action of user B on user A's objects — API and
// WebDAV, with A's names, A's upload, A's result files, and Destination
// headers into A's area — is refused (or, for B's own namespace, touches
// only B's objects), and A's state is exactly the same afterwards.
func TestIsolationMatrix(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := context.Background()
	// Alice: a running chain with results waiting, a second chain, and an
	// upload collection not yet submitted.
	c1 := v.submit("alice", "g", "c1", 3)
	v.submit("alice", "g", "c2", 1)
	v.finish(c1.Chains[0].FirstWU)
	au, _ := v.db.UserByName(ctx, "alice")
	res, err := v.e.Results(ctx, au, "g", "")
	if err != nil || len(res.Files) != 3 {
		t.Fatalf("alice's results: %+v %v", res, err)
	}
	aFile := res.Files[0].Name
	upA, refsA := v.upload("alice", "alice's secret\n")
	aDAV := "/DAV/alice/" + upA + "/" + refsA[0].MD5
	upB, refsB := v.upload("bob", "bob's file\n")
	bDAV := "/DAV/bob/" + upB + "/" + refsB[0].MD5

	refused := func(a answer) error {
		if a.ok() {
			return fmt.Errorf("not refused: %v", a)
		}
		return nil
	}
	countZero := func(a answer) error {
		var c wire.CountResponse
		if a.ok() && (json.Unmarshal([]byte(a.body), &c) != nil || c.Count != 0) {
			return fmt.Errorf("touched something: %v", a)
		}
		return nil
	}
	noAlice := func(a answer) error {
		if strings.Contains(a.body, "c1") || strings.Contains(a.body, "ALICE") || strings.Contains(a.body, "alice") {
			return fmt.Errorf("shows alice's objects: %v", a)
		}
		return nil
	}
	aliceInputs := []wire.FileRef{{MD5: md5of("1 2 3\n"), Size: 6}, {MD5: md5of("0 0 0\n"), Size: 6}}
	listedMissing := func(a answer) error {
		var m wire.MissingResponse
		if !a.ok() || json.Unmarshal([]byte(a.body), &m) != nil || len(m.Missing) != len(aliceInputs) {
			return fmt.Errorf("tells whether alice's contents exist: %v", a)
		}
		return nil
	}
	ownOnly := func(a answer) error {
		if !a.ok() || !strings.Contains(a.body, "-BOB_g-") {
			return fmt.Errorf("bob's own submission: %v", a)
		}
		return nil
	}
	api := "/rboinc_cgi/api/v1"
	pooled := langevin("g", "c1", "", 1, aliceInputs[0], aliceInputs[1])
	upOwn, _ := v.upload("bob", "1 2 3\n", "0 0 0\n")
	ownCopy := langevin("g", "c1", upOwn, 1, aliceInputs[0], aliceInputs[1])
	withAliceUpload := langevin("g", "x1", upA, 1, refsA[0], refsA[0])
	type action struct {
		name   string
		method string
		path   string
		body   any
		hdr    []string
		check  func(answer) error
	}
	actions := []action{
		{"status of A's group", "GET", api + "/status?group=g", nil, nil, refused},
		{"status of A's chain", "GET", api + "/status?group=g&name=c1", nil, nil, refused},
		{"status of everything", "GET", api + "/status", nil, nil, noAlice},
		{"results of A's group", "GET", api + "/results?group=g", nil, nil, refused},
		{"results of A's chain", "GET", api + "/results?group=g&name=c1", nil, nil, refused},
		{"download A's result file", "GET", api + "/files/g/" + aFile, nil, nil, refused},
		{"ack A's result file", "POST", api + "/ack", wire.AckRequest{Group: "g", Files: []string{aFile}}, nil, countZero},
		{"stop A's group", "POST", api + "/stop", wire.ChainRef{Group: "g"}, nil, refused},
		{"stop A's chain", "POST", api + "/stop", wire.ChainRef{Group: "g", Name: "c1"}, nil, refused},
		{"purge A's group", "POST", api + "/purge", wire.ChainRef{Group: "g"}, nil, refused},
		{"purge A's chain", "POST", api + "/purge", wire.ChainRef{Group: "g", Name: "c2"}, nil, refused},
		{"submit with A's upload id", "POST", api + "/submit", withAliceUpload, nil, refused},
		{"discard A's upload", "DELETE", api + "/uploads/" + upA, nil, nil, refused},
		{"ask whether A's pooled contents exist", "POST", api + "/pool/missing", wire.MissingRequest{MD5s: []string{aliceInputs[0].MD5, aliceInputs[1].MD5}}, nil, listedMissing},
		{"submit A's pooled contents by MD5 alone", "POST", api + "/submit", pooled, nil, refused},
		{"submit into A's group and chain name", "POST", api + "/submit", ownCopy, nil, ownOnly},
		{"DAV GET A's upload", "GET", aDAV, nil, nil, refused},
		{"DAV HEAD A's upload", "HEAD", aDAV, nil, nil, refused},
		{"DAV PUT over A's upload", "PUT", aDAV, "evil", nil, refused},
		{"DAV PUT new file in A's collection", "PUT", "/DAV/alice/" + upA + "/new", "evil", nil, refused},
		{"DAV PROPFIND A's area", "PROPFIND", "/DAV/alice/", nil, []string{"Depth", "infinity"}, refused},
		{"DAV PROPFIND A's collection", "PROPFIND", "/DAV/alice/" + upA + "/", nil, []string{"Depth", "1"}, refused},
		{"DAV DELETE A's upload", "DELETE", aDAV, nil, nil, refused},
		{"DAV DELETE A's collection", "DELETE", "/DAV/alice/" + upA + "/", nil, nil, refused},
		{"DAV MKCOL in A's area", "MKCOL", "/DAV/alice/newcol/", nil, nil, refused},
		{"DAV MOVE A's upload to B", "MOVE", aDAV, nil, []string{"Destination", bDAV + "x"}, refused},
		{"DAV COPY A's upload to B", "COPY", aDAV, nil, []string{"Destination", "/DAV/bob/" + upB + "/stolen"}, refused},
		{"DAV COPY B's file into A's collection", "COPY", bDAV, nil, []string{"Destination", "/DAV/alice/" + upA + "/planted"}, refused},
		{"DAV MOVE B's file over A's upload", "MOVE", bDAV, nil, []string{"Destination", aDAV, "Overwrite", "T"}, refused},
		{"DAV COPY B's file into A's area by absolute URL", "COPY", bDAV, nil, []string{"Destination", v.srv.URL + "/DAV/alice/" + upA + "/planted"}, refused},
		{"DAV MOVE B's file by dot-dot into A's area", "MOVE", bDAV, nil, []string{"Destination", "/DAV/bob/../alice/" + upA + "/planted"}, refused},
		{"DAV COPY B's file by encoded dot-dot", "COPY", bDAV, nil, []string{"Destination", "/DAV/bob/%2e%2e/alice/" + upA + "/planted"}, refused},
		{"DAV LOCK A's upload", "LOCK", aDAV, `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>`, nil, refused},
		{"DAV PROPPATCH A's upload", "PROPPATCH", aDAV, `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="y">1</x></D:prop></D:set></D:propertyupdate>`, nil, refused},
		{"DAV GET by dot-dot from B's area", "GET", "/DAV/bob/../alice/" + upA + "/" + refsA[0].MD5, nil, nil, refused},
		{"DAV GET by encoded dot-dot", "GET", "/DAV/bob/%2e%2e/alice/" + upA + "/" + refsA[0].MD5, nil, nil, refused},
		{"DAV GET by backslash", "GET", "/DAV/bob/..%5calice%5c" + upA, nil, nil, refused},
		{"DAV PROPFIND the root of all areas", "PROPFIND", "/DAV/", nil, []string{"Depth", "1"}, refused},
		{"DAV case-folded owner", "GET", "/DAV/ALICE/" + upA + "/" + refsA[0].MD5, nil, nil, refused},
	}
	for _, a := range actions {
		before := v.state("alice")
		var body string
		switch b := a.body.(type) {
		case nil:
		case string:
			body = b
		default:
			j, _ := json.Marshal(b)
			body = string(j)
		}
		got := v.call("bob", a.method, a.path, strings.NewReader(body), a.hdr...)
		if err := a.check(got); err != nil {
			t.Errorf("bob: %s (%s %s): %v", a.name, a.method, a.path, err)
		}
		v.unchanged(t, "bob: "+a.name, "alice", before)
		t.Logf("bob: %-48s %-9s -> %d %s", a.name, a.method, got.status, got.err.Error)
	}
	// Alice's token under bob's name, and the reverse, are refused.
	for _, pair := range [][2]string{{"bob", "alice"}, {"alice", "bob"}} {
		req, _ := http.NewRequest("GET", v.srv.URL+"/DAV/"+pair[0]+"/", nil)
		req.SetBasicAuth(pair[0], v.tokens[pair[1]])
		resp, err := noRedirect.Do(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s's token as %s: %v %v", pair[1], pair[0], resp.StatusCode, err)
		}
		resp.Body.Close()
	}
	// Alice herself still has everything.
	if a := v.call("alice", "GET", aDAV, nil); a.body != "alice's secret\n" {
		t.Errorf("alice's upload: %v", a)
	}
	if a := v.call("alice", "GET", api+"/files/g/"+aFile, nil); a.status != 200 {
		t.Errorf("alice's result: %v", a)
	}
}
