package boincdb

import (
	"strings"
	"testing"
)

const sampleWUDoc = `<file_info>
    <name>rboinc_5d41402abc4b2a76b9719d911017c592</name>
    <url>http://127.0.0.1/rbtest/download/3a/rboinc_5d41402abc4b2a76b9719d911017c592</url>
    <gzipped_url>http://127.0.0.1/rbtest/download/3a/rboinc_5d41402abc4b2a76b9719d911017c592.gz</gzipped_url>
    <gzipped_nbytes>25</gzipped_nbytes>
    <md5_cksum>5d41402abc4b2a76b9719d911017c592</md5_cksum>
    <nbytes>5.000000</nbytes>
</file_info>
<file_info>
    <name>langevin.conf</name>
    <url>http://127.0.0.1/rbtest/download/1f/langevin.conf</url>
    <md5_cksum>00000000000000000000000000000000</md5_cksum>
    <nbytes>12</nbytes>
    <no_delete/>
</file_info>
<workunit>
    <file_ref>
        <file_name>rboinc_5d41402abc4b2a76b9719d911017c592</file_name>
        <open_name>input.coor</open_name>
    </file_ref>
</workunit>
`

func TestParseInputs(t *testing.T) {
	got := ParseInputs(sampleWUDoc)
	if len(got) != 2 || got[0] != (InputFile{Name: "rboinc_5d41402abc4b2a76b9719d911017c592", MD5: "5d41402abc4b2a76b9719d911017c592", Bytes: 5, Gzipped: true}) ||
		got[1].Name != "langevin.conf" || got[1].Bytes != 12 || got[1].Gzipped {
		t.Fatalf("%+v", got)
	}
	// Cut short: what is whole is kept.
	if got := ParseInputs(sampleWUDoc[:strings.Index(sampleWUDoc, "langevin")]); len(got) != 1 {
		t.Fatalf("cut short: %+v", got)
	}
	if got := ParseInputs("<file_info><name>x</name><nbytes>-3</nbytes></file_info>"); len(got) != 1 || got[0].Bytes != 0 {
		t.Fatalf("negative size: %+v", got)
	}
}

// FuzzParseInputs: any xml_doc (BOINC's database is written by others)
// parses without panicking, into names and sums taken from within it.
func FuzzParseInputs(f *testing.F) {
	f.Add(sampleWUDoc)
	f.Add("<file_info><name></file_info>")
	f.Add("<file_info><name>a</name><nbytes>1e300</nbytes></file_info><file_info>")
	f.Fuzz(func(t *testing.T, doc string) {
		for _, in := range ParseInputs(doc) {
			if !strings.Contains(doc, in.Name) || !strings.Contains(doc, in.MD5) || in.Bytes < 0 {
				t.Fatalf("%+v not from %q", in, doc)
			}
		}
	})
}
