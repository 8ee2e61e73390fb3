package pool

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

const helloMD5 = "5d41402abc4b2a76b9719d911017c592"

func TestWriteVerified(t *testing.T) {
	p := &Pool{Dir: filepath.Join(t.TempDir(), "pool")}
	r := strings.NewReader("hellothere")
	if err := p.WriteVerified(r, helloMD5, 5); err != nil || !p.Has(helloMD5) {
		t.Fatalf("WriteVerified: %v", err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "there" {
		t.Fatalf("read past the content: %q left", rest)
	}
	if fi, _ := os.Stat(p.Path(helloMD5)); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode %v", fi.Mode())
	}
	other := "00000000000000000000000000000001"
	var mm *MismatchError
	r = strings.NewReader("worldnext")
	if err := p.WriteVerified(r, other, 5); !errors.As(err, &mm) || mm.Got != "7d793037a0760186574b0282f2f435e7" || p.Has(other) {
		t.Fatalf("mismatch: %v", err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "next" {
		t.Fatalf("a mismatch did not read the whole content: %q left", rest)
	}
	if err := p.WriteVerified(strings.NewReader("hel"), other, 5); !errors.Is(err, ErrShortContent) || p.Has(other) {
		t.Fatalf("short: %v", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(p.Dir, "*", ".in*")); len(ents) != 0 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

func TestIngestTrustsOnlyTheVerifiedFileUnchanged(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	up := filepath.Join(dir, helloMD5)
	put := func(content string) os.FileInfo {
		os.WriteFile(up, []byte(content), 0o644)
		fi, _ := os.Lstat(up)
		return fi
	}
	// Noted as verified while it holds other bytes (what a swap after the
	// check would look like to Ingest): a trusted note takes it unread...
	fi := put("HELLO")
	p.NoteVerified(up, helloMD5, fi)
	if _, err := p.Ingest(up, helloMD5); err != nil {
		t.Fatalf("trusted ingest: %v", err)
	}
	if b, _ := os.ReadFile(p.Path(helloMD5)); string(b) != "HELLO" {
		t.Fatal("the verified file was read again; this test cannot tell trust from hashing")
	}
	os.Remove(p.Path(helloMD5))
	// ...but not once it was changed, replaced or renamed since.
	for name, change := range map[string]func(){
		"rewritten": func() { os.WriteFile(up, []byte("HELLO"), 0o644) },
		"replaced":  func() { os.Remove(up); os.WriteFile(up, []byte("HELLO"), 0o644) },
		"moved":     func() { os.Rename(up, up+"x"); os.Rename(up+"x", up) },
		"chmod":     func() { os.Chmod(up, 0o600) },
	} {
		fi := put("HELLO")
		p.NoteVerified(up, helloMD5, fi)
		time.Sleep(20 * time.Millisecond) // past the file system's clock granularity
		change()
		if _, err := p.Ingest(up, helloMD5); err == nil || !strings.Contains(err.Error(), "not the announced") {
			t.Errorf("%s: %v", name, err)
		}
		if p.Has(helloMD5) {
			t.Fatalf("%s: wrong content pooled", name)
		}
	}
	// A note for another file than the one written is not taken.
	put("HELLO")
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("x"), 0o644)
	ofi, _ := os.Lstat(other)
	p.NoteVerified(up, helloMD5, ofi)
	if _, err := p.Ingest(up, helloMD5); err == nil {
		t.Error("a note about another file was trusted")
	}
}

func TestStageRepairs(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	if err := p.WriteVerified(strings.NewReader("hello"), helloMD5, 5); err != nil {
		t.Fatal(err)
	}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	dst := proj.DownloadPath(PhysicalName(helloMD5))
	if _, err := p.Stage(proj, helloMD5, 5); err != nil {
		t.Fatal(err)
	}
	// A lost sidecar is written again; a damaged file is replaced.
	os.Remove(dst + ".md5")
	if _, err := p.Stage(proj, helloMD5, 5); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := boinc.ReadSidecar(dst); !ok {
		t.Fatal("sidecar not written again")
	}
	// A sidecar cut short by a crash, or one telling another content, is
	// replaced, whether the link is there or new.
	for _, stale := range []string{"", boinc.SidecarText("00000000000000000000000000000001", 5)} {
		for _, relink := range []bool{false, true} {
			if relink {
				os.Remove(dst)
			}
			if err := os.WriteFile(dst+".md5", []byte(stale), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Stage(proj, helloMD5, 5); err != nil {
				t.Fatal(err)
			}
			if sum, n, ok := boinc.ReadSidecar(dst); !ok || sum != helloMD5 || n != 5 {
				t.Fatalf("stale sidecar %q (link new: %v) kept: %s %d %v", stale, relink, sum, n, ok)
			}
		}
	}
	os.Remove(dst)
	os.WriteFile(dst, []byte("hello, damaged"), 0o644)
	if _, err := p.Stage(proj, helloMD5, 5); err != nil {
		t.Fatal(err)
	}
	if sum, _, _ := md5sum.File(dst); sum != helloMD5 {
		t.Fatal("damaged staged file kept")
	}
	// A content gone from the pool is named.
	os.Remove(p.Path(helloMD5))
	if _, err := p.Stage(proj, "00000000000000000000000000000002", 1); err == nil || !strings.Contains(err.Error(), "gone from the pool") {
		t.Fatalf("missing content: %v", err)
	}
}

func TestIngestAny(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	src := filepath.Join(dir, "coor_file")
	os.WriteFile(src, []byte("hello"), 0o644)
	sum, n, err := p.IngestAny(src)
	if err != nil || sum != helloMD5 || n != 5 || !p.Has(helloMD5) {
		t.Fatalf("IngestAny: %s %d %v", sum, n, err)
	}
	if _, err := os.Lstat(src); err == nil {
		t.Error("the upload is still in the scratch area")
	}
	os.Symlink(p.Path(helloMD5), src)
	if _, _, err := p.IngestAny(src); err == nil {
		t.Error("symlink ingested")
	}
	if ents, _ := filepath.Glob(filepath.Join(p.Dir, ".in*")); len(ents) != 0 {
		t.Fatalf("temporary files left: %v", ents)
	}
}
