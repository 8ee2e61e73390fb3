package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

// TestDownloadNames: new work units use rboinc's own namespace; both it
// and the jf_ names of older work units are rboinc's, and nothing else is
// (a name a user might make up to pass for one: other case, a path, a
// suffix).
func TestDownloadNames(t *testing.T) {
	sum := "5d41402abc4b2a76b9719d911017c592"
	if got := PhysicalName(sum); got != "rboinc_"+sum {
		t.Fatalf("PhysicalName: %s", got)
	}
	for _, n := range []string{"rboinc_" + sum, "jf_" + sum} {
		if got, ok := ParsePhysicalName(n); !ok || got != sum {
			t.Errorf("%s: %q %v", n, got, ok)
		}
	}
	for _, n := range []string{"rboinc_" + strings.ToUpper(sum), "rboinc_" + sum + ".md5", "rboinc_../" + sum, "RBOINC_" + sum,
		"xrboinc_" + sum, "rboinc_" + sum[:31], "jf_" + sum + "x", sum, "rboinc_", ""} {
		if _, ok := ParsePhysicalName(n); ok {
			t.Errorf("%q taken for one of rboinc's names", n)
		}
	}
	for n, want := range map[string]bool{
		".rboinc_" + sum + ".0a1b2c3d4e5f.ln": true, ".jf_" + sum + ".0a1b2c3d4e5f.ln": true,
		".rboinc_" + sum + ".md5.tmp123": true, "rboinc_" + sum: false, ".other_" + sum + ".ln": false, ".jf_x": false,
	} {
		if got := IsDownloadTempName(n); got != want {
			t.Errorf("IsDownloadTempName(%q) = %v", n, got)
		}
	}
}

// TestRestage: Restage puts the pool's content back under either name,
// replacing what is there, and refuses a name that is not the content's.
func TestRestage(t *testing.T) {
	dir := t.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	sum, n, err := p.WriteContent(strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	for _, name := range []string{PhysicalName(sum), LegacyPhysicalName(sum)} {
		dst := proj.DownloadPath(name)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		os.WriteFile(dst, []byte("HELLO"), 0o644)
		if err := p.Restage(proj, name, sum, n); err != nil {
			t.Fatal(err)
		}
		a, _ := os.Stat(dst)
		b, _ := os.Stat(p.Path(sum))
		if !os.SameFile(a, b) {
			t.Fatalf("%s is not the pool's file", name)
		}
		if s, sz, ok := boinc.ReadSidecar(dst); !ok || s != sum || sz != n {
			t.Fatalf("sidecar %q %d %v", s, sz, ok)
		}
	}
	if err := p.Restage(proj, PhysicalName("00000000000000000000000000000000"), sum, n); err == nil {
		t.Fatal("a name of other content accepted")
	}
	if err := p.Restage(proj, "input.dat", sum, n); err == nil {
		t.Fatal("a name outside rboinc's namespace accepted")
	}
}
