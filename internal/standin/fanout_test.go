package standin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

func TestPrepareFanout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := InitProject(dir, InitOptions{ServerExe: "/opt/rboinc-server"}); err != nil {
		t.Fatal(err)
	}
	p, err := boinc.LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := PrepareFanout(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(p.DownloadDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != p.Fanout {
		t.Fatalf("%d entries in download/, want the %d fan-out directories", len(ents), p.Fanout)
	}
	// Every name create_work would stage lands in a directory made here.
	for _, name := range []string{"jf_5d41402abc4b2a76b9719d911017c592", "a_in", "x"} {
		if fi, err := os.Stat(filepath.Dir(p.DownloadPath(name))); err != nil || !fi.IsDir() {
			t.Errorf("directory of %s missing: %v", name, err)
		}
	}
	if err := PrepareFanout(context.Background(), p); err != nil {
		t.Fatalf("again: %v", err)
	}

	// A real project's hierarchy is left to BOINC.
	real := &boinc.Project{Dir: t.TempDir(), Fanout: 1024}
	real.DownloadDir = filepath.Join(real.Dir, "download")
	os.Mkdir(real.DownloadDir, 0o755)
	if err := PrepareFanout(context.Background(), real); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(real.DownloadDir); len(ents) != 0 {
		t.Errorf("%d directories made in a real project", len(ents))
	}
}

func TestMakeFanout(t *testing.T) {
	dir := t.TempDir()
	if err := makeFanout(context.Background(), dir, 0); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a flat hierarchy got %d directories", len(ents))
	}
	// Some made already (BOINC made them as contents came): the rest too.
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	if err := makeFanout(context.Background(), dir, 16); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 16 {
		t.Fatalf("%d directories, want 16", len(ents))
	}
	for _, e := range ents {
		if !e.IsDir() || len(e.Name()) != 1 {
			t.Errorf("unexpected entry %q", e.Name())
		}
	}
	// A file where a directory belongs is an error.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if err := makeFanout(context.Background(), file, 4); err == nil {
		t.Error("fan-out under a file accepted")
	}
}

func TestMakeFanoutStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := makeFanout(ctx, dir, 1024); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d directories made after the end", len(ents))
	}
}
