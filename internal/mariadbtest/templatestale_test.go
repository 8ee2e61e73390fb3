package mariadbtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTemplateWithoutMarkerMadeAgain: a template directory left without
// its marker (a TMPDIR cleaner aged the never-read marker out while the
// copied files stayed fresh) is no template: the next Start makes and
// keeps a new one instead of failing every Start from then on because it
// cannot rename its install onto the old.
func TestTemplateWithoutMarkerMadeAgain(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	args := []string{"--" + t.Name()}
	tmpl := templateDir("/nonexistent/install-db", "/nonexistent/mariadbd", args)
	if err := os.MkdirAll(filepath.Join(tmpl, "mysql"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmpl, "mysql", "old.frm"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	installs := 0
	install := func(ctx context.Context, dir, datadir string) error {
		installs++
		if err := os.MkdirAll(datadir, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(datadir, "fresh"), []byte("fresh"), 0o600); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(datadir, installedMarker), nil, 0o644)
	}
	for i := range 2 {
		datadir := filepath.Join(t.TempDir(), "data")
		if err := fromTemplate(t.Context(), "/nonexistent/install-db", "/nonexistent/mariadbd", args, t.TempDir(), datadir, install); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if _, err := os.Stat(filepath.Join(datadir, "fresh")); err != nil {
			t.Errorf("start %d: the data directory is not the fresh install: %v", i, err)
		}
		if _, err := os.Stat(filepath.Join(datadir, "mysql", "old.frm")); err == nil {
			t.Errorf("start %d: the data directory holds the marker-less template's files", i)
		}
	}
	if installs != 1 {
		t.Errorf("%d installs, want 1 (the second start copies the new template)", installs)
	}
}
