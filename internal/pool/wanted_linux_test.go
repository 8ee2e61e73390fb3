package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
)

// Touching a staged content keeps it from collection without making its
// download link's .md5 sidecar look stale: the link is the pool file's own
// inode, and a sidecar older than its file is one rboinc's Stage writes
// again and BOINC's create_work recomputes (a resubmission of 2,000 known
// contents rewrote 2,000 sidecars).
func TestTouchKeepsStagedSidecarValid(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	sum, size, err := p.WriteContent(strings.NewReader("staged content\n"))
	if err != nil {
		t.Fatal(err)
	}
	name, err := p.Stage(proj, sum, size)
	if err != nil {
		t.Fatal(err)
	}
	dst := proj.DownloadPath(name)
	// Staged an hour ago, sidecar and all.
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{p.Path(sum), dst + ".md5"} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	if !p.AgedSince(sum, mid) {
		t.Fatal("content not aged before the touch")
	}
	if !p.Touch(sum) {
		t.Fatal("Touch: content not found")
	}
	if p.AgedSince(sum, mid) {
		t.Fatal("a touched content is still aged: collection may take it")
	}
	if got, n, ok := boinc.ReadSidecar(dst); !ok || got != sum || n != size {
		t.Fatalf("after a touch the staged sidecar reads %q %d ok=%v: it looks stale, and every use of the content writes it again", got, n, ok)
	}
}
