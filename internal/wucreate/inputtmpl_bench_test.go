package wucreate

import (
	"io"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

// BenchmarkInputTemplate: process_input_template of one work unit with two
// staged variable inputs, as native creation does for every job.
func BenchmarkInputTemplate(b *testing.B) {
	dir := b.TempDir()
	p := &boinc.Project{Dir: dir, DownloadDir: dir, DownloadURL: "http://x/d", Fanout: 1024, CacheMD5: true}
	var vars []InFile
	for _, n := range []string{"v1", "v2"} {
		path := p.DownloadPath(n)
		writeTestFile(b, path, n)
		sum, size, _ := md5sum.File(path)
		boinc.WriteSidecar(path, sum, size)
		vars = append(vars, InFile{Name: n})
	}
	r := templateRun{p: p, vars: vars, stdout: io.Discard, stderr: io.Discard, staged: map[string]stagedFile{}}
	b.ReportAllocs()
	for b.Loop() {
		wu := DefaultRow()
		if _, code := r.processInputTemplate(tmplIn3a, &wu); code != 0 {
			b.Fatal(code)
		}
	}
}
