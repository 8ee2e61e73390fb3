package standin

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

// TestStageInputsChecksWhatTheSlotGot: the slot gets each input under its
// open name, a copy for <copy_file/> (the app may change it) and a link
// otherwise, and each is checked against its MD5 as the client checks a
// download: a damaged copy fails the result with ERR_MD5_FAILED, a missing
// file with the web server's permanent error, and nothing but the inputs
// is left in the slot (no temporary file of the copy).
func TestStageInputsChecksWhatTheSlotGot(t *testing.T) {
	t.Parallel()
	dl := t.TempDir()
	p := &boinc.Project{DownloadDir: dl, Fanout: 8}
	put := func(name, content string) string {
		path := boinc.HierPath(dl, name, p.Fanout)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s := md5.Sum([]byte(content))
		return hex.EncodeToString(s[:])
	}
	lic, coor := put("lic", "license\n"), put("w_coor", "0.1 0.2 0.3\n")
	doc := func(coorMD5 string) wuDoc {
		return wuDoc{
			files: []wuFile{{name: "lic", md5: lic}, {name: "w_coor", md5: coorMD5}},
			refs:  []wuRef{{fileName: "lic", openName: "LICENSE"}, {fileName: "w_coor", openName: "input.coor", copyFile: true}},
		}
	}

	slot := t.TempDir()
	if err := stageInputs(p, doc(coor), slot); err != nil {
		t.Fatalf("good inputs: %v", err)
	}
	ents, _ := os.ReadDir(slot)
	if len(ents) != 2 {
		t.Fatalf("the slot holds %d files, want the 2 inputs: %v", len(ents), ents)
	}
	if b, _ := os.ReadFile(filepath.Join(slot, "input.coor")); string(b) != "0.1 0.2 0.3\n" {
		t.Fatalf("input.coor in the slot: %q", b)
	}
	links := func(name string) uint64 {
		fi, err := os.Stat(filepath.Join(slot, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Nlink
	}
	if links("input.coor") != 1 || links("LICENSE") != 2 {
		t.Fatalf("links: input.coor %d (a copy: want 1), LICENSE %d (linked: want 2)", links("input.coor"), links("LICENSE"))
	}

	var de *downloadError
	if err := stageInputs(p, doc(lic), t.TempDir()); !errors.As(err, &de) || de.code != errMD5Failed {
		t.Fatalf("a copy whose MD5 is not the file's: %v, want ERR_MD5_FAILED", err)
	}
	bad := doc(coor)
	bad.files[0].md5 = coor // the linked input's MD5 wrong
	if err := stageInputs(p, bad, t.TempDir()); !errors.As(err, &de) || de.code != errMD5Failed {
		t.Fatalf("a link whose MD5 is not the file's: %v, want ERR_MD5_FAILED", err)
	}
	gone := doc(coor)
	gone.refs[1].fileName = "w_gone"
	if err := stageInputs(p, gone, t.TempDir()); !errors.As(err, &de) || de.code != errHTTPPermanent {
		t.Fatalf("a missing input: %v, want the permanent HTTP error", err)
	}
}

// TestStageInputsLeavesDownloadsAlone: an input copied under an open name
// the slot holds already, as a link to another download (two file_refs of
// one open name), replaces that link; it does not write through it into
// the download directory, whose file other work units share (a plain copy
// opened with O_TRUNC truncated and overwrote it).
func TestStageInputsLeavesDownloadsAlone(t *testing.T) {
	t.Parallel()
	dl := t.TempDir()
	p := &boinc.Project{DownloadDir: dl, Fanout: 8}
	put := func(name, content string) string {
		path := boinc.HierPath(dl, name, p.Fanout)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s := md5.Sum([]byte(content))
		return hex.EncodeToString(s[:])
	}
	lic, coor := put("lic", "license\n"), put("w_coor", "0.1 0.2 0.3\n")
	for _, copyFile := range []bool{true, false} {
		wd := wuDoc{
			files: []wuFile{{name: "lic", md5: lic}, {name: "w_coor", md5: coor}},
			refs:  []wuRef{{fileName: "lic", openName: "same"}, {fileName: "w_coor", openName: "same", copyFile: copyFile}},
		}
		stageInputs(p, wd, t.TempDir()) // its outcome aside: the downloads must stay
		if b, _ := os.ReadFile(boinc.HierPath(dl, "lic", p.Fanout)); string(b) != "license\n" {
			t.Fatalf("copy_file %v: the download lic now holds %q, want it unchanged", copyFile, b)
		}
	}
}
