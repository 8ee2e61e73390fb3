package pool

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

// TestStageGzip: a staged content's compressed copy is name.gz holding
// its content, made once (a copy there is kept), with no temporary file
// left beside it; Unstage removes it with the content's link and sidecar.
func TestStageGzip(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	sum, n, err := p.WriteContent(strings.NewReader("hello, compressed\n"))
	if err != nil {
		t.Fatal(err)
	}
	name, err := p.Stage(proj, sum, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := StageGzip(proj, name); err != nil {
		t.Fatal(err)
	}
	gz := proj.DownloadPath(name) + ".gz"
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	f.Close()
	if err != nil || string(b) != "hello, compressed\n" {
		t.Fatalf("%s holds %q (%v)", gz, b, err)
	}
	before, _ := os.Stat(gz)
	if err := StageGzip(proj, name); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(gz); !os.SameFile(before, after) {
		t.Fatal("a second StageGzip replaced the .gz")
	}
	ents, _ := os.ReadDir(filepath.Dir(gz))
	if len(ents) != 3 {
		t.Fatalf("beside the content: %v, want it, its .md5 and its .gz", ents)
	}
	p.Unstage(proj, sum, false)
	if ents, _ := os.ReadDir(filepath.Dir(gz)); len(ents) != 0 {
		t.Fatalf("left after Unstage: %v", ents)
	}
	if err := StageGzip(proj, "rboinc_0123"); err == nil {
		t.Fatal("compressing a content never staged did not fail")
	}
}
