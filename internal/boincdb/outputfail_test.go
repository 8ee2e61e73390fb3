package boincdb

import (
	"reflect"
	"strings"
	"testing"
)

// TestOutputFailures: the outputs a client reported absent or too big are
// read from the result's stderr_out (a real client's, with <stderr_txt>,
// and the stand-in's, without), named by their open names with their
// limits from the result's xml_doc_in; the client's XML stays out of the
// application's stderr.
func TestOutputFailures(t *testing.T) {
	docIn := `<file_info>
    <name>wu_0_r1_0</name>
    <url>http://up</url>
    <max_nbytes>20000.000000</max_nbytes>
</file_info>
<file_info>
    <name>wu_0_r1_1</name>
    <max_nbytes>1000</max_nbytes>
</file_info>
<result>
    <name>wu_0_r1</name>
    <file_ref>
        <file_name>wu_0_r1_0</file_name>
        <open_name>run.log</open_name>
    </file_ref>
    <file_ref>
        <file_name>wu_0_r1_1</file_name>
        <open_name>extra.out</open_name>
    </file_ref>
</result>`
	msg := "<message>\nupload failure: <file_xfer_error>\n  <file_name>wu_0_r1_0</file_name>\n  <error_code>-131 (file size too big)</error_code>\n</file_xfer_error>\n" +
		"<file_xfer_error>\n  <file_name>wu_0_r1_1</file_name>\n  <error_code>-161 (not found)</error_code>\n</file_xfer_error>\n</message>\n"
	want := []OutputFailure{{Name: "wu_0_r1_0", OpenName: "run.log", Code: ErrFileTooBig, MaxNBytes: 20000}, {Name: "wu_0_r1_1", OpenName: "extra.out", Code: ErrNotFound, MaxNBytes: 1000}}
	for _, stderr := range []string{
		"<core_client_version>8.0.2</core_client_version>\n<![CDATA[\n<stderr_txt>\nwrote 3000 lines\n</stderr_txt>\n" + msg + "]]>\n",
		"wrote 3000 lines\n" + msg,
	} {
		got := outputFailures(stderr, docIn)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("outputFailures(%q) = %+v", stderr, got)
		}
		if tail := lastLines(appStderr(stderr), 3, 300); tail != "wrote 3000 lines" {
			t.Errorf("application's stderr %q", tail)
		}
	}
	if a, b := want[0].Text(), want[1].Text(); a != "output file run.log was bigger than its limit (max_nbytes 20000 bytes)" || b != "output file extra.out was absent" {
		t.Errorf("Text: %q, %q", a, b)
	}
	// An input's download error is not an output's failure.
	dl := "<message>\nWU download error: couldn't get input files:\n<file_xfer_error>\n  <file_name>in_1</file_name>\n  <error_code>-224 (permanent HTTP error)</error_code>\n</file_xfer_error>\n</message>\n"
	if got := outputFailures(dl, docIn); len(got) != 0 {
		t.Errorf("download error read as %+v", got)
	}
	// A file_info without max_nbytes: BOINC's client allowed no bytes.
	noMax := strings.Replace(docIn, "    <max_nbytes>20000.000000</max_nbytes>\n", "", 1)
	if got := outputFailures(msg, noMax); len(got) != 2 || !got[0].NoLimit || got[1].NoLimit ||
		got[0].Text() != "output file run.log was nonempty while the queue's result template gives it no <max_nbytes> above 0 (BOINC's client then fails every nonempty output): the server's administrator must add one (`rboinc-server doctor` names it)" {
		t.Errorf("without max_nbytes: %+v", got)
	}
	// Without xml_doc_in the physical name stands in.
	if got := outputFailures(msg, ""); len(got) != 2 || got[0].Text() != "output file wu_0_r1_0 was bigger than its limit (max_nbytes)" {
		t.Errorf("without xml_doc_in: %+v", got)
	}
}
