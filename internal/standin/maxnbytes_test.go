package standin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
)

// TestOutputWithoutMaxNBytes: like BOINC's client (FILE_INFO's max_nbytes
// starts at 0; app_finished fails an output when size > max_nbytes, with
// no exception for 0), an output whose <file_info> has no <max_nbytes>, or
// 0, fails with ERR_FILE_TOO_BIG when it is not empty, and is deleted; an
// empty one passes.
func TestOutputWithoutMaxNBytes(t *testing.T) {
	const doc = `<file_info>
    <name>w_0_r1_0</name>
    <url>http://up</url>
</file_info>
<file_info>
    <name>w_0_r1_1</name>
    <url>http://up</url>
    <max_nbytes>0</max_nbytes>
</file_info>
<file_info>
    <name>w_0_r1_2</name>
    <url>http://up</url>
    <max_nbytes>100</max_nbytes>
</file_info>
<result>
    <name>w_0_r1</name>
    <file_ref>
        <file_name>w_0_r1_0</file_name>
        <open_name>none.out</open_name>
    </file_ref>
    <file_ref>
        <file_name>w_0_r1_1</file_name>
        <open_name>zero.out</open_name>
    </file_ref>
    <file_ref>
        <file_name>w_0_r1_2</file_name>
        <open_name>ok.out</open_name>
    </file_ref>
</result>
`
	run := func(none, zero string) (string, string, error) {
		dir := t.TempDir()
		p := &boinc.Project{Dir: dir, UploadDir: filepath.Join(dir, "upload")}
		slot := filepath.Join(dir, "slot")
		os.MkdirAll(slot, 0o755)
		for name, c := range map[string]string{"none.out": none, "zero.out": zero, "ok.out": "fine\n"} {
			if err := os.WriteFile(filepath.Join(slot, name), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, err := uploadOutputs(p, doc, slot)
		return out, slot, err
	}

	out, _, err := run("", "")
	if err != nil {
		t.Fatalf("empty outputs without max_nbytes: %v", err)
	}
	if n := strings.Count(out, "<file_info>"); n != 3 {
		t.Errorf("%d outputs reported, want 3:\n%s", n, out)
	}

	_, slot, err := run("x", "yz")
	var bad outputsError
	if !errors.As(err, &bad) || len(bad) != 2 {
		t.Fatalf("nonempty outputs without max_nbytes: err %v, want both too big", err)
	}
	for i, want := range []struct {
		name string
		size int64
	}{{"w_0_r1_0", 1}, {"w_0_r1_1", 2}} {
		if f := bad[i]; f.name != want.name || f.code != errFileTooBig || f.size != want.size || f.max != 0 {
			t.Errorf("failure %d: %+v, want %s of %d bytes, code %d, max 0", i, f, want.name, want.size, errFileTooBig)
		}
	}
	msg := err.Error()
	for _, want := range []string{"output file none.out (w_0_r1_0) is 1 bytes, over its max_nbytes 0", "output file zero.out (w_0_r1_1) is 2 bytes", "no <max_nbytes> above 0"} {
		if !strings.Contains(msg, want) {
			t.Errorf("reason %q lacks %q", msg, want)
		}
	}
	if cm := bad.clientMessage(); strings.Count(cm, "<error_code>-131 (file size too big)</error_code>") != 2 {
		t.Errorf("client message %q: want two -131", cm)
	}
	// The client deletes an output that is too big.
	for _, name := range []string{"none.out", "zero.out"} {
		if _, err := os.Stat(filepath.Join(slot, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left in the slot: %v", name, err)
		}
	}
}
