package standin

import (
	"strings"
	"testing"
)

func TestProcessResultTemplate(t *testing.T) {
	doc, err := processResultTemplate(tmplOut, "wu_0_r5_", "http://up")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(strings.NewReplacer("<OUTFILE_0/>", "wu_0_r5_0", "<UPLOAD_URL/>", "http://up").Replace(tmplOut))
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
	outs, err := parseResultDoc(doc)
	if err != nil || len(outs) != 1 || outs[0] != (outFile{name: "wu_0_r5_0", openName: "out.coor", maxNBytes: 5e6, uploadURL: "http://up"}) {
		t.Errorf("outputs %+v %v", outs, err)
	}
	// The wrapper is cut off; two outputs in file_ref order.
	doc, _ = processResultTemplate(tmplOut2, "w_1_r9_", "u")
	if strings.Contains(doc, "output_template") || !strings.HasPrefix(doc, "<file_info>") {
		t.Errorf("wrapper kept: %q", doc)
	}
	outs, _ = parseResultDoc(doc)
	if len(outs) != 2 || outs[0].name != "w_1_r9_0" || outs[1].openName != "out.log" {
		t.Errorf("outputs %+v", outs)
	}
	// A malformed macro stops the processing; BOINC keeps what was done.
	doc, err = processResultTemplate("<a><OUTFILE_0/></a><OUTFILE_1 x><UPLOAD_URL/>", "b_", "u")
	if err == nil || doc != "<a>b_0</a><OUTFILE_1 x><UPLOAD_URL/>" {
		t.Errorf("malformed: %q %v", doc, err)
	}
	if _, err := parseResultDoc("<result><file_ref><file_name>x</file_name></file_ref></result>"); err == nil {
		t.Error("file_ref without open_name accepted")
	}
}

func FuzzResultTemplate(f *testing.F) {
	f.Add(tmplOut)
	f.Add(tmplOut2)
	f.Fuzz(func(t *testing.T, tmpl string) {
		doc, err := processResultTemplate(tmpl, "w_0_r1_", "http://u")
		if err == nil && strings.Contains(doc, "<OUTFILE_") {
			t.Fatalf("macro left in %q", doc)
		}
		parseResultDoc(doc)
	})
}
