package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/naming"
)

// A take ahead that finds the results directory gone (a purge of another
// chain of the group removes it when empty, between the pretake's
// MkdirAll and its link) does not report the output missing from the
// upload hierarchy: an optional output would be left out of the record
// (and deleted by BOINC), a required one deferred for minutes. The record
// takes it itself instead.
func TestPretakeResultsDirGoneIsNoMissingOutput(t *testing.T) {
	dir := t.TempDir()
	e := &Engine{Proj: &boinc.Project{UploadDir: filepath.Join(dir, "upload"), Fanout: 1024}}
	wu := naming.Format("c", "alice", "g", 0, 2, naming.Tag(1))
	var doc string
	var srcs []string
	for k, opt := range []string{"<optional/>", ""} {
		out := wu + "_0_r123_" + string(rune('0'+k))
		src := e.Proj.UploadPath(out)
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, []byte("output\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
		doc += "<file_ref><file_name>" + out + "</file_name><open_name>o</open_name>" + opt + "</file_ref>"
	}
	results := filepath.Join(dir, "results", "ALICE_g") // not there: removed after the pretake made it
	wo := &wuOutputs{done: make(chan struct{})}
	pretakeJob{w: boincdb.ReadyWU{ID: 1, Name: wu, Canonical: &boincdb.CanonicalResult{Name: wu + "_0", XMLDocIn: doc}}, dir: results, out: wo}.run(context.Background(), e, &pretakes{})
	for k, src := range srcs {
		if gone, _ := wo.missing(src); gone {
			t.Errorf("output %d, in the upload hierarchy, is reported missing: its work unit would be deferred", k)
		}
		if _, _, missing, _ := wo.Took(src, filepath.Join(results, naming.ResultFile(wu, k))); missing {
			t.Errorf("output %d, in the upload hierarchy, is taken as missing: its record would leave it out", k)
		}
	}
}
