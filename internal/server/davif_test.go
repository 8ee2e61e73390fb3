package server

import (
	"strings"
	"testing"
)

func TestParseIf(t *testing.T) {
	ok := []struct {
		in   string
		want string // lists as tag:conditions, "|" between lists
	}{
		{`(<opaquelocktoken:a>)`, `:<opaquelocktoken:a>`},
		{`(<urn:a> ["x"]) (Not <DAV:no-lock> ["x"])`, `:<urn:a>["x"]|:!<DAV:no-lock>["x"]`},
		{` <http://h/a> (<urn:a>) ([W/"y"]) </b> (NOT <urn:b>)`, `http://h/a:<urn:a>|http://h/a:[W/"y"]|/b:!<urn:b>`},
		{"(\t<urn:a>\r\n [W/\"z\"] )", `:<urn:a>[W/"z"]`},
	}
	for _, tc := range ok {
		h, err := parseIf(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := ifString(h); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
	bad := []string{``, `()`, `(<urn:a>`, `<urn:a>`, `<a> (<urn:a>) <b>`, `(<urn:a>) <b> (<urn:b>)`, `<a> <b> (<urn:a>)`,
		`(urn:a)`, `(<>)`, `(<urn a>)`, `(["x)`, `([x])`, `(["a"b"])`, `(Not)`, `(Not`, `(<urn:a>) x`, `(Notx <urn:a>)`,
		`<> (<urn:a>)`, strings.Repeat(`(<urn:a>)`, maxIfHeader/9+1)}
	for _, in := range bad {
		if h, err := parseIf(in); err == nil {
			t.Errorf("%.60q: accepted as %s", in, ifString(h))
		}
	}
}

// ifString writes a parsed header in the tests' short form.
func ifString(h ifHeader) string {
	var lists []string
	for _, l := range h.lists {
		s := l.tag + ":"
		for _, c := range l.conds {
			if c.not {
				s += "!"
			}
			if c.token != "" {
				s += "<" + c.token + ">"
			} else {
				s += "[" + c.etag + "]"
			}
		}
		lists = append(lists, s)
	}
	return strings.Join(lists, "|")
}

// FuzzParseIf: the If header parser never panics, and what it accepts is
// well formed: at least one list, each with conditions that are a token or
// an entity tag, and it reads the same again once written back.
func FuzzParseIf(f *testing.F) {
	for _, s := range []string{`(<opaquelocktoken:a-b>)`, `<http://h/DAV/u/f> (<urn:a> ["1"]) (Not <DAV:no-lock>)`,
		`(Not <DAV:no-lock> [W/"x"])`, `<a>(<b>)<c>(<d>)`, `(["x"`, "(<a>\x00)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, err := parseIf(in)
		if err != nil {
			return
		}
		if len(h.lists) == 0 {
			t.Fatalf("%q: no list", in)
		}
		var back strings.Builder
		for i, l := range h.lists {
			if len(l.conds) == 0 {
				t.Fatalf("%q: an empty list", in)
			}
			if l.tag != "" && (i == 0 || h.lists[i-1].tag != l.tag) {
				back.WriteString("<" + l.tag + ">")
			}
			back.WriteString("(")
			for _, c := range l.conds {
				if (c.token == "") == (c.etag == "") {
					t.Fatalf("%q: condition %+v", in, c)
				}
				if c.not {
					back.WriteString("Not ")
				}
				if c.token != "" {
					back.WriteString("<" + c.token + ">")
				} else {
					back.WriteString("[" + c.etag + "]")
				}
			}
			back.WriteString(")")
		}
		h2, err := parseIf(back.String())
		if err != nil || ifString(h2) != ifString(h) {
			t.Fatalf("%q read back from %q: %v, %v", in, back.String(), ifString(h2), err)
		}
	})
}
