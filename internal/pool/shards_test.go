package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareMakesEveryShard(t *testing.T) {
	p := &Pool{Dir: filepath.Join(t.TempDir(), "pool")}
	// One shard made earlier (an older server): the others are still made.
	if err := os.MkdirAll(filepath.Join(p.Dir, "7f"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 256 {
		t.Fatalf("%d entries in the pool, want the 256 shards", len(ents))
	}
	for i, e := range ents {
		if !e.IsDir() || e.Name() != shardNames[i] || len(e.Name()) != 2 {
			t.Fatalf("entry %d is %q (dir %v), want shard %q", i, e.Name(), e.IsDir(), shardNames[i])
		}
	}
	// Every content's directory is among them.
	for _, sum := range []string{"00ffffffffffffffffffffffffffffff", "0a000000000000000000000000000000", "ff000000000000000000000000000000"} {
		if fi, err := os.Stat(filepath.Dir(p.Path(sum))); err != nil || !fi.IsDir() {
			t.Errorf("directory of %s missing: %v", sum, err)
		}
	}
	if err := p.Prepare(); err != nil {
		t.Fatalf("second Prepare: %v", err)
	}
}

func TestPrepareReportsAnImpossiblePool(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pool")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Pool{Dir: file}
	if err := p.Prepare(); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("Prepare on a file: %v", err)
	}
}
