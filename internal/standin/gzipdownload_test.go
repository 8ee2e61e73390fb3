package standin

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

// TestStageInputsGzipped: an input whose <file_info> has <gzipped_url> is
// downloaded as name.gz and decompressed, as BOINC's client does: the slot
// gets what the .gz holds (not the uncompressed file beside it), checked
// against <md5_cksum>; a .gz the web server lacks is its permanent error,
// a damaged one a checksum failure, and one that is not gzip data is read
// as it is (zlib's gzread).
func TestStageInputsGzipped(t *testing.T) {
	t.Parallel()
	dl := t.TempDir()
	p := &boinc.Project{DownloadDir: dl, Fanout: 8}
	const content = "the state, 1 2 3\n"
	sum := md5.Sum([]byte(content))
	want := hex.EncodeToString(sum[:])
	path := boinc.HierPath(dl, "st", p.Fanout)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// The uncompressed file differs: the client never reads it.
	if err := os.WriteFile(path, []byte("not what the .gz holds\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(content))
	zw.Close()
	doc := wuDoc{files: []wuFile{{name: "st", md5: want, gzipped: true}}, refs: []wuRef{{fileName: "st", openName: "state.in"}}}
	var de *downloadError
	if err := stageInputs(p, doc, t.TempDir()); !errors.As(err, &de) || de.code != errHTTPPermanent {
		t.Fatalf("no .gz on the server: %v, want the permanent HTTP error", err)
	}
	for _, c := range []struct {
		name, gz string
		code     int // 0: staged with content
	}{
		{"gzip data", gz.String(), 0},
		{"not gzip data", content, 0},
		{"cut short", gz.String()[:gz.Len()/2], errMD5Failed},
		{"other content", "other\n", errMD5Failed},
	} {
		if err := os.WriteFile(path+".gz", []byte(c.gz), 0o644); err != nil {
			t.Fatal(err)
		}
		slot := t.TempDir()
		err := stageInputs(p, doc, slot)
		if c.code != 0 {
			if !errors.As(err, &de) || de.code != c.code {
				t.Errorf("%s: %v, want code %d", c.name, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if b, _ := os.ReadFile(filepath.Join(slot, "state.in")); string(b) != content {
			t.Errorf("%s: the slot's state.in is %q, want %q", c.name, b, content)
		}
	}
}

// TestVolunteerGzippedInput: create_work describes an input with <gzip/>
// by its .gz (staged as stage_file --gzip does), the volunteer's app gets
// the .gz's content decompressed, and once the work unit is done the file
// deleter removes the input, its .md5 and its .gz, as BOINC's does.
func TestVolunteerGzippedInput(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("templates/gz_in", `<file_info><gzip/></file_info><file_info></file_info>
<workunit><file_ref><open_name>in.coor</open_name></file_ref><file_ref><open_name>in.psf</open_name></file_ref>
<rsc_fpops_est>1e9</rsc_fpops_est></workunit>
`, 0o644)
	in := tp.stage("g_in1.coor", "coordinates\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("coordinates\n"))
	zw.Close()
	if err := os.WriteFile(in+".gz", gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the client must not read: the uncompressed file, made
	// different after create_work hashed it.
	psf := tp.stage("g_in1.psf", "topology\n")
	const wu = "gz1-TONI_G-0-1-RND0001"
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, "--wu_template", "templates/gz_in", "g_in1.coor", "g_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	if err := os.WriteFile(in, []byte("COORDINATES, changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tp.startVolunteer()
	tp.waitIdle()
	if got := tp.read("hook.out"); got != "COORDINATES\n" {
		t.Errorf("the app's output %q: it did not get the .gz's content", got)
	}
	for _, f := range []string{in, in + ".md5", in + ".gz", psf} {
		if fileExists(f) {
			t.Errorf("%s not deleted", f)
		}
	}
}
