package wucreate

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

func tokens(s string) []string {
	x := newScanner(s)
	var out []string
	for x.getTag() {
		if x.isTag {
			out = append(out, "<"+x.tag+">")
		} else {
			out = append(out, x.tag)
		}
	}
	return out
}

func TestScannerLikeBOINC(t *testing.T) {
	cases := map[string][]string{
		`<rboinc a="x"/>`:                 {"<rboinc/>"},
		`<rboinc p="nm/ps"/>`:             {"<rboinc//>"},
		`<a  b="1" >  text  </a>`:         {"<a>", "text", "</a>"},
		`<!-- c --><x/><!---->`:           {"<x/>"},
		`<a><![CDATA[ <raw> ]]></a>`:      {"<a>", "<raw>", "</a>"},
		"<a>x\x00<b>":                     {"<a>"},
		`<a>trailing text`:                {"<a>"},
		`<?xml version="1.0"?><boinc>`:    {"<?xml>", "<boinc>"},
		`<copy_file />`:                   {"<copy_file/>"},
		`<x attr="a>b"><y>`:               {"<x>", `b">`, "<y>"},
		"<open_name>\n in \n</open_name>": {"<open_name>", "in", "</open_name>"},
	}
	for in, want := range cases {
		if got := tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestScannerParse(t *testing.T) {
	x := newScanner(`<n>0x1F</n><d>1e10</d><s>a &amp; b</s><e/><b>1</b><bad>1x</bad><c><k>v</k></c>`)
	x.getTag()
	if v, ok := x.parseInt("n"); !ok || v != 31 {
		t.Errorf("parseInt = %d %v", v, ok)
	}
	x.getTag()
	if v, ok := x.parseDouble("d"); !ok || v != 1e10 {
		t.Errorf("parseDouble = %v %v", v, ok)
	}
	x.getTag()
	if v, ok := x.parseStr("s", maxXMLString); !ok || v != "a & b" {
		t.Errorf("parseStr = %q %v", v, ok)
	}
	x.getTag()
	if v, ok := x.parseStr("e", maxXMLString); !ok || v != "" {
		t.Errorf("empty = %q %v", v, ok)
	}
	x.getTag()
	if v, ok := x.parseBool("b"); !ok || !v {
		t.Errorf("parseBool = %v %v", v, ok)
	}
	// A failed parse consumes the text; copy_element then finds the end tag.
	x.getTag()
	if _, ok := x.parseInt("bad"); ok {
		t.Error("1x parsed as an int")
	}
	if el, err := x.copyElement(); err != nil || el != "<bad></bad>" {
		t.Errorf("copyElement after a failed parse = %q %v", el, err)
	}
	x.getTag()
	if el, err := x.copyElement(); err != nil || el != "<c><k>v</k></c>" {
		t.Errorf("copyElement = %q %v", el, err)
	}
	x = newScanner(`<open>never closed`)
	x.getTag()
	if _, err := x.copyElement(); err == nil {
		t.Error("unterminated element copied")
	}
}

func TestCNumbers(t *testing.T) {
	for s, want := range map[string]int64{"10": 10, "-3": -3, "0x10": 16, "010": 8, "+7": 7} {
		if v, ok := cStrtol(s); !ok || v != want {
			t.Errorf("cStrtol(%q) = %d %v", s, v, ok)
		}
	}
	for _, s := range []string{"1x", "09", "0x", "1_0", " 1", "99999999999999999999"} {
		if _, ok := cStrtol(s); ok {
			t.Errorf("cStrtol(%q) accepted", s)
		}
	}
	if XMLUnescape("&lt;&#65;&#x41;&#999;&bogus;") != "<A&#x41;&#999;&bogus;" {
		t.Errorf("XMLUnescape = %q", XMLUnescape("&lt;&#65;&#x41;&#999;&bogus;"))
	}
}

func FuzzScanner(f *testing.F) {
	f.Add(tmplIn3a)
	f.Add(`<a><![CDATA[x]]><!-- y --><b c="/"/></a>`)
	f.Fuzz(func(t *testing.T, s string) {
		x := newScanner(s)
		for i := 0; x.getTag(); i++ {
			if i > len(s) {
				t.Fatal("more tokens than bytes")
			}
			switch i % 5 {
			case 0:
				x.parseStr("a", smallBufLen)
			case 1:
				x.parseInt("a")
			case 2:
				x.parseBool("a")
			case 3:
				x.parseDouble("a")
			default:
				x.copyElement()
			}
		}
	})
}

// FuzzInputTemplate runs templates through process_input_template with one
// staged variable input and one staged constant input.
func FuzzInputTemplate(f *testing.F) {
	f.Add(tmplIn3a)
	f.Add("<file_info><physical_name>c</physical_name><gzip/></file_info><workunit><file_ref><copy_file/></file_ref></workunit>")
	f.Add("<workunit><command_line>x</command_line><target_nresults>0x2</target_nresults></workunit>")
	dir := f.TempDir()
	p := &boinc.Project{Dir: dir, DownloadDir: dir, DownloadURL: "http://x/d", Fanout: 1024, CacheMD5: true}
	for _, n := range []string{"v", "c"} {
		path := p.DownloadPath(n)
		writeTestFile(f, path, n)
		sum, size, _ := md5sum.File(path)
		boinc.WriteSidecar(path, sum, size)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		wu := DefaultRow()
		r := templateRun{p: p, vars: []InFile{{Name: "v"}}, stdout: io.Discard, stderr: io.Discard}
		doc, code := r.processInputTemplate(tmpl, &wu)
		if code == 0 && !strings.Contains(doc, "<workunit>\n<command_line>\n") {
			t.Fatalf("accepted without the workunit command line: %q", doc)
		}
		if code == 0 && len(doc) > MaxBlob {
			t.Fatal("accepted an over-long xml_doc")
		}
	})
}

func writeTestFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
