package legacy

import (
	"os"
	"reflect"
	"regexp"
	"testing"
)

// revRE matches the server's revision attribute, the one value our
// answers cannot share with the original's.
var revRE = regexp.MustCompile(`ServerRevision="[^"]*"`)

func TestTemplateAnswerIsTheOriginals(t *testing.T) {
	// The original metabeta templates, rebuilt from the original's answer:
	// parsed and re-serialised as XML::Simple does, they must give that
	// answer back byte for byte.
	ans := hash{"ServerRevision": ServerRevision}
	for key, file := range map[string]string{"WuTemplate": "rboinc_metabeta_wu", "ResultTemplate": "rboinc_metabeta_result"} {
		v, err := readTemplate("testdata/templates/" + file)
		if err != nil {
			t.Fatal(err)
		}
		ans[key] = v
	}
	want, err := os.ReadFile("testdata/original/submit-10step_01-get_wu_template.xml")
	if err != nil {
		t.Fatal(err)
	}
	got := xmlOut(retrieveRoot, ans)
	if g, w := revRE.ReplaceAllString(string(got), "REV"), revRE.ReplaceAllString(string(want), "REV"); g != w {
		t.Errorf("template answer differs from the original's:\n%s", firstDiff(g, w))
	}
}

func TestXMLOutShapes(t *testing.T) {
	for _, tc := range []struct {
		root string
		v    hash
		want string
	}{
		{"RetrieveStatus", hash{"Failure": hash{"Reason": "a <= b & \"c\""}},
			"<RetrieveStatus>\n  <Failure Reason=\"a &lt;= b &amp; &quot;c&quot;\" />\n</RetrieveStatus>\n"},
		{"RetrieveStatus", hash{"ServerRevision": "r", "Success": hash{"Message": "m", contentKey: ""}},
			"<RetrieveStatus ServerRevision=\"r\">\n  <Success Message=\"m\"></Success>\n</RetrieveStatus>\n"},
		{"R", hash{"B": "2", "A": "1\nx", "List": hash{"File": list{"f1", "f2"}}},
			"<R A=\"1\nx\"\n   B=\"2\">\n  <List>\n    <File>f1</File>\n    <File>f2</File>\n  </List>\n</R>\n"},
		// An empty hash is an empty element with an end tag; an empty list
		// still makes its parent an element with content.
		{"R", hash{"e": hash{}, "f": hash{"x": "1", "a": list{}}},
			"<R>\n  <e></e>\n  <f x=\"1\">\n  </f>\n</R>\n"},
		// A hash of hashes is unfolded on "name", which comes first.
		{"R", hash{"url": hash{"UPLOAD_URL": hash{}}, "k": hash{"id": "1", "a": "2"}},
			"<R>\n  <k id=\"1\"\n     a=\"2\" />\n  <url name=\"UPLOAD_URL\" />\n</R>\n"},
		// Text and nested elements together.
		{"R", hash{"S": hash{contentKey: "t", "c": hash{"a": "1"}}},
			"<R>\n  <S>t<c a=\"1\" />\n  </S>\n</R>\n"},
	} {
		if got := string(xmlOut(tc.root, tc.v)); got != tc.want {
			t.Errorf("xmlOut(%v) =\n%q\nwant\n%q", tc.v, got, tc.want)
		}
	}
}

func TestXMLIn(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{`<r a="1"><b>x</b><b>y</b><c/><d> t </d></r>`, hash{"a": "1", "b": list{"x", "y"}, "c": hash{}, "d": " t "}},
		{`<r><file_ref><n>1</n></file_ref></r>`, hash{"file_ref": list{hash{"n": "1"}}}},
		{`<r>text<!-- c -->more</r>`, "textmore"},
		{`<r a="1">text</r>`, hash{"a": "1", contentKey: "text"}},
		{"<r>\n  <x/>\n</r>", hash{"x": hash{}}},
		// Lists of hashes with a scalar key attribute fold into a hash.
		{`<r><e name="a" v="1"/><e name="b" v="2"/></r>`, hash{"e": hash{"a": hash{"v": "1"}, "b": hash{"v": "2"}}}},
		{`<r><e name="a"/><e v="2"/></r>`, hash{"e": list{hash{"name": "a"}, hash{"v": "2"}}}},
		{`<r><name><OUTFILE_0/></name></r>`, hash{"name": hash{"OUTFILE_0": hash{}}}},
		{`<r>&lt;&#65;</r>`, "<A"},
		{"<r a=\"x\ny\tz\"/>", hash{"a": "x y z"}},
	} {
		got, err := xmlIn([]byte(tc.in), "file_ref")
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("xmlIn(%s) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		`<!DOCTYPE r [<!ENTITY e "x">]><r>&e;</r>`,
		`<r>&e;</r>`,
		`<r><a></r>`,
		`<r a="1" a="2"/>`,
		`<r/><s/>`,
		`x<r/>`,
		`<r>`,
		"",
	} {
		if v, err := xmlIn([]byte(bad)); err == nil {
			t.Errorf("xmlIn(%q) = %#v, want an error", bad, v)
		}
	}
	deep := ""
	for range maxDepth + 1 {
		deep = "<a>" + deep + "</a>"
	}
	if _, err := xmlIn([]byte(deep)); err == nil {
		t.Error("no error for too deep nesting")
	}
}

// FuzzXMLIn: any input is read or refused without a panic, and what is
// read can be written.
func FuzzXMLIn(f *testing.F) {
	for _, s := range []string{`<r a="1"><b>x</b><b>y</b></r>`, `<r><e name="a"/><e name="b"/></r>`, "<r>t<!--c-->u<x/>v</r>"} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("testdata/requests/submit-10step.xml"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := xmlIn(data, "file_ref")
		if err != nil {
			return
		}
		if h, ok := v.(hash); ok {
			xmlOut("R", h)
		}
	})
}

// firstDiff shows where two texts start to differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-200)
	return "got:  ..." + got[lo:min(len(got), i+200)] + "\nwant: ..." + want[lo:min(len(want), i+200)]
}
