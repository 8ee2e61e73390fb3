package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

// Staging for native creation writes no sidecar, and staging the same
// content again once create_work is back writes it (BOINC's create_work
// would compute the MD5 itself; the sidecar spares it that).
func TestStageWithoutSidecarsThenWith(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool"), NoSidecars: true}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	sum, size, err := p.WriteContent(strings.NewReader("input for native creation\n"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a new link, then one already there
		name, err := p.Stage(proj, sum, size)
		if err != nil {
			t.Fatal(err)
		}
		dst := proj.DownloadPath(name)
		if b, err := os.ReadFile(dst); err != nil || string(b) != "input for native creation\n" {
			t.Fatalf("staged link reads %q, %v", b, err)
		}
		if _, err := os.Lstat(dst + ".md5"); err == nil {
			t.Fatal("staging without sidecars wrote one")
		}
	}
	p.NoSidecars = false
	name, err := p.Stage(proj, sum, size)
	if err != nil {
		t.Fatal(err)
	}
	if got, n, ok := boinc.ReadSidecar(proj.DownloadPath(name)); !ok || got != sum || n != size {
		t.Fatalf("staged again with sidecars: sidecar reads %q %d ok=%v", got, n, ok)
	}
}
