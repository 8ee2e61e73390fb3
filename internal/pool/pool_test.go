package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

func TestIngestStage(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	up := filepath.Join(dir, "up")
	os.WriteFile(up, []byte("hello"), 0o644)
	const sum = "5d41402abc4b2a76b9719d911017c592"
	if _, err := p.Ingest(up, "00000000000000000000000000000000"); err == nil || !strings.Contains(err.Error(), "not the announced") {
		t.Fatalf("mismatch accepted: %v", err)
	}
	if _, err := os.Lstat(up); err == nil || p.Has("00000000000000000000000000000000") {
		t.Fatal("a content that does not match its name was kept")
	}
	os.WriteFile(up, []byte("hello"), 0o644)
	n, err := p.Ingest(up, sum)
	if err != nil || n != 5 || !p.Has(sum) {
		t.Fatalf("Ingest: %d %v", n, err)
	}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	name, err := p.Stage(proj, sum, 5)
	if err != nil || name != "rboinc_"+sum {
		t.Fatal(name, err)
	}
	path := proj.DownloadPath(name)
	if s, sz, ok := boinc.ReadSidecar(path); !ok || s != sum || sz != 5 {
		t.Fatalf("sidecar %q %d %v", s, sz, ok)
	}
	a, _ := os.Stat(path)
	b, _ := os.Stat(p.Path(sum))
	if !os.SameFile(a, b) {
		t.Error("download entry is not a hard link to the pool")
	}
	if _, err := p.Stage(proj, sum, 5); err != nil {
		t.Fatal("second stage:", err)
	}
	// A symlink in the scratch area is refused.
	os.Symlink("/etc/passwd", filepath.Join(dir, "ln"))
	if _, err := p.Ingest(filepath.Join(dir, "ln"), sum); err == nil {
		t.Error("symlink ingested")
	}
}
