package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// The status says where running steps are in BOINC; with BOINC's database
// unreadable it still answers, without that, says why in the response,
// and logs it once however often it is asked. Another user's chains stay
// refused.
func TestStatusWhereWithoutBoinc(t *testing.T) {
	ctx := context.Background()
	e := nativeRoot(t, "sqlite")
	var logs bytes.Buffer
	e.Log = slog.New(slog.NewTextHandler(&logs, nil))
	id, err := e.State().AddUser(ctx, "alice", "hash-alice")
	if err != nil {
		t.Fatal(err)
	}
	u := store.User{ID: id, Name: "alice"}
	submitChains(t, e, u, "g", 3, 2)
	st, err := e.StatusWhere(ctx, u, "g", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Chains {
		if c.State != wire.StateRunning || c.BoincState != wire.BoincUnsent || c.WhereInBoinc() != "waiting in BOINC, sent to no volunteer yet" {
			t.Errorf("chain %s: state %s, in BOINC %q (%s), want running and unsent", c.Name, c.State, c.BoincState, c.WhereInBoinc())
		}
	}
	if st.BoincError != "" {
		t.Errorf("BoincError = %q with BOINC's database readable", st.BoincError)
	}
	bid, err := e.State().AddUser(ctx, "bob", "hash-bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.StatusWhere(ctx, store.User{ID: bid, Name: "bob"}, "g", ""); err == nil || !strings.Contains(err.Error(), "no group g") {
		t.Errorf("bob's status of alice's group: %v, want refused as no group g", err)
	}

	// BOINC's database turns unreadable (here: its file overwritten).
	db := filepath.Join(e.Proj.Dir, "standin.db")
	if err := os.WriteFile(db, bytes.Repeat([]byte("not a database "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		st, err := e.StatusWhere(ctx, u, "g", "")
		if err != nil {
			t.Fatalf("status with BOINC's database unreadable: %v", err)
		}
		if len(st.Chains) != 3 || !strings.Contains(st.BoincError, "BOINC's database cannot be read now") {
			t.Fatalf("status with BOINC's database unreadable: %d chains, BoincError %q", len(st.Chains), st.BoincError)
		}
		for _, leak := range []string{"standin.db", "malformed", "reading where", e.Proj.Dir} {
			if strings.Contains(st.BoincError, leak) {
				t.Errorf("the answer shows the database's error (%q): %s", leak, st.BoincError)
			}
		}
		for _, c := range st.Chains {
			if c.State != wire.StateRunning || c.BoincState != "" {
				t.Errorf("chain %s: state %s, in BOINC %q, want running, nothing from BOINC", c.Name, c.State, c.BoincState)
			}
		}
	}
	if n := strings.Count(logs.String(), "status without where steps are in BOINC"); n != 1 || !strings.Contains(logs.String(), "reading where work units are") {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	// -gridstatus says the same in its words, and no more.
	gs, err := e.GridStatus(ctx, u, "g")
	if err != nil || len(gs.Groups) != 1 || !strings.Contains(gs.BoincError, "BOINC's database cannot be read now") {
		t.Fatalf("gridstatus with BOINC's database unreadable: %+v %v", gs, err)
	}
	for _, leak := range []string{"standin.db", "malformed", e.Proj.Dir} {
		if strings.Contains(gs.BoincError, leak) {
			t.Errorf("gridstatus shows the database's error (%q): %s", leak, gs.BoincError)
		}
	}
	// So does -priority, whose work units in BOINC keep theirs.
	pr, err := e.SetPriority(ctx, u, wire.PriorityRequest{ChainRef: wire.ChainRef{Group: "g"}, Priority: 5})
	if err != nil || pr.Count != 3 || !strings.Contains(pr.Message, "keep their priority") || !strings.Contains(pr.Message, "under request") {
		t.Fatalf("priority with BOINC's database unreadable: %+v %v", pr, err)
	}
	for _, leak := range []string{"standin.db", "malformed", e.Proj.Dir} {
		if strings.Contains(pr.Message, leak) {
			t.Errorf("priority shows the database's error (%q): %s", leak, pr.Message)
		}
	}
}
