package engine_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A chain's arguments land unescaped in its work units' xml_doc (BOINC's
// create_work, and native creation with it, copy the command line as it
// is), and BOINC's file deleter takes every <file_info><name> of a
// finished work unit's xml_doc without <no_delete/>, as a path under
// download/ that may hold "..". Markup in arguments would let any user
// delete another user's inputs or any file the project's account may
// remove, so it is refused.
func TestSubmitRefusesMarkupInArgs(t *testing.T) {
	f := newFixture(t)
	for i, arg := range []string{
		"</command_line><file_info><name>../../config.xml</name></file_info>",
		"<file_info><name>jf_victim</name></file_info>",
		"a&amp;b",
		"x>y",
	} {
		up, refs := f.upload("1 2 3\n", "0 0 0\n")
		name := "m" + string(rune('a'+i))
		_, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
			Options: wire.Options{NumSteps: 1},
			Chains: []wire.ChainSpec{{Name: name, Args: []string{"-n", arg},
				Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
		if engine.KindOf(err) != engine.KindBadRequest || !strings.Contains(err.Error(), "markup") {
			t.Errorf("args %q: got %v, want a bad request naming the markup", arg, err)
		}
	}
	// Plain arguments still pass, and the work unit's xml_doc has the
	// template's inputs only.
	up, refs := f.upload("1 2 3\n", "0 0 0\n")
	resp, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g", Upload: up,
		Options: wire.Options{NumSteps: 1},
		Chains: []wire.ChainSpec{{Name: "plain", Args: []string{"-n", "10", "--x=a/b:c;d"},
			Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}})
	if err != nil {
		t.Fatalf("plain arguments: %v", err)
	}
	db, err := sql.Open("sqlite", filepath.Join(f.e.Proj.Dir, "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var doc string
	if err := db.QueryRow(`SELECT xml_doc FROM workunit WHERE name = ?`, resp.Chains[0].FirstWU).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "-n 10 --x=a/b:c;d") {
		t.Fatalf("xml_doc lacks the command line:\n%s", doc)
	}
}
