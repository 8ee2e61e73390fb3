package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// TestMasterAcknowledgesOverHTTP: a master's acknowledgement (which names
// its consumer) removes its results through the server's own route, and
// the same acknowledgement of rboinc-retrieve's group is refused 409,
// leaving that group's results in place.
func TestMasterAcknowledgesOverHTTP(t *testing.T) {
	v := newEnv(t)
	up, refs := v.upload("alice", "1 2 3\n", "0 0 0\n")
	req := langevin("tag", "m", up, 1, refs[0], refs[1])
	req.Consumer = wire.ConsumerMaster
	a := v.post("alice", server.Base+wire.PathSubmit, req)
	var master wire.SubmitResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &master) != nil {
		t.Fatalf("a master's submission: %v", a)
	}
	v.finish(master.Chains[0].FirstWU)
	mine := v.submit("alice", "g", "c", 1)
	v.finish(mine.Chains[0].FirstWU)

	results := func(group, consumer string) []string {
		t.Helper()
		a := v.call("alice", "GET", server.Base+wire.PathResults+"?group="+group+"&consumer="+consumer, nil)
		var r wire.ResultsResponse
		if !a.ok() || json.Unmarshal([]byte(a.body), &r) != nil {
			t.Fatalf("results of %s for %q: %v", group, consumer, a)
		}
		var names []string
		for _, f := range r.Files {
			names = append(names, f.Name)
		}
		return names
	}
	files, others := results("tag", wire.ConsumerMaster), results("g", wire.ConsumerRetriever)
	if len(files) == 0 || len(others) == 0 {
		t.Fatalf("results: the master's %v, rboinc-retrieve's %v", files, others)
	}
	a = v.post("alice", server.Base+wire.PathAck, wire.AckRequest{Group: "tag", Files: files, Consumer: wire.ConsumerMaster})
	var n wire.CountResponse
	if !a.ok() || json.Unmarshal([]byte(a.body), &n) != nil || n.Count != len(files) {
		t.Fatalf("the master's acknowledgement of %d files: %v", len(files), a)
	}
	if left := results("tag", wire.ConsumerMaster); len(left) != 0 {
		t.Fatalf("acknowledged, still listed: %v", left)
	}
	a = v.post("alice", server.Base+wire.PathAck, wire.AckRequest{Group: "g", Files: others, Consumer: wire.ConsumerMaster})
	if a.status != http.StatusConflict || a.err.Code != wire.CodeOtherConsumer {
		t.Fatalf("a master acknowledging rboinc-retrieve's results: %v", a)
	}
	if left := results("g", wire.ConsumerRetriever); len(left) != len(others) {
		t.Fatalf("rboinc-retrieve's results after a master's acknowledgement: %v, were %v", left, others)
	}
}
