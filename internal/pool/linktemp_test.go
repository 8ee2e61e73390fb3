package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRetriedTakeLeavesNoTemporary: a retried take finds its result already
// linked to the same file; rename(2) then does nothing, and the temporary
// link must still go.
func TestRetriedTakeLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "upload_0")
	if err := os.WriteFile(src, []byte("output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	os.Mkdir(out, 0o755)
	dst := filepath.Join(out, "wu_0")
	for range 3 {
		if _, _, err := TakeOutput(src, dst, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := linkOrCopy(src, dst); err != nil { // staging again, the same way
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "wu_0" {
		t.Fatalf("results directory holds %v, want only wu_0", names)
	}
}

// TestSweepTempsRemovesOnlyOldTemporaries: what a crash left (old hidden
// temporaries) goes; fresh ones, real files and other hidden files stay.
func TestSweepTempsRemovesOnlyOldTemporaries(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "ab")
	os.Mkdir(shard, 0o755)
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]bool{ // name: swept
		"ab/.abc.0123456789ab.ln": true, "ab/.in123": true, ".wu_0.tmp456": true, "ab/.x.md5.tmp9": true,
		"ab/abcdef": false, ".keepme": false, "wu_0": false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o644)
		os.Chtimes(p, old, old)
	}
	fresh := filepath.Join(shard, ".new.0123456789ab.ln")
	os.WriteFile(fresh, nil, 0o644)
	n, err := SweepTemps(dir, 1, time.Now().Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for name, swept := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != swept {
			t.Errorf("%s: gone=%v, want %v", name, gone, swept)
		}
		if swept {
			want++
		}
	}
	if n != want {
		t.Errorf("swept %d, want %d", n, want)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary (an operation in progress) was removed: %v", err)
	}
}
