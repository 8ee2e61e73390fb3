package pool

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIngestDropsUserAttrs: an upload carrying WebDAV properties (user.*
// extended attributes) enters the pool without them.
func TestIngestDropsUserAttrs(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	up := filepath.Join(dir, "up")
	os.WriteFile(up, []byte("hello"), 0o644)
	if err := unix.Setxattr(up, "user.rboinc.davprops", []byte(`[{"Local":"x"}]`), 0); err != nil {
		t.Skipf("this file system keeps no user attributes: %v", err)
	}
	const sum = "5d41402abc4b2a76b9719d911017c592"
	if _, err := p.Ingest(up, sum); err != nil {
		t.Fatal(err)
	}
	if n, err := unix.Listxattr(p.Path(sum), make([]byte, 1024)); err != nil || n != 0 {
		t.Fatalf("the pooled content has %d bytes of attribute names (%v)", n, err)
	}
}
