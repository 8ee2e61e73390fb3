package words

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrap(t *testing.T) {
	cases := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"   \n ", 10, nil},
		{"one two three", 7, []string{"one two", "three"}},
		{"one two three", 13, []string{"one two three"}},
		// A word longer than the width stands alone, whole.
		{"see /a/very/long/path/name here", 8, []string{"see", "/a/very/long/path/name", "here"}},
		{"x\n\ny\tz", 3, []string{"x y", "z"}},
		// Width counts characters, not bytes.
		{"é é é é", 3, []string{"é é", "é é"}},
	}
	for _, c := range cases {
		if got := Wrap(c.text, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}

func TestIndent(t *testing.T) {
	got := Indent("  -a FILE   ", "Run parameters: lines 'key value' for steps", 30)
	want := "  -a FILE   Run parameters:\n" +
		"            lines 'key value'\n" +
		"            for steps\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := Indent("Head: ", "", 30); got != "Head:\n" {
		t.Errorf("empty text: %q", got)
	}
}

// FuzzWrap: no line is longer than the width unless it is a single word,
// and the words come out as they went in.
func FuzzWrap(f *testing.F) {
	f.Add("one two three", 7)
	f.Add("a\u00a0b  c\n\nd", 1)
	f.Fuzz(func(t *testing.T, text string, width int) {
		if width < 1 || width > 1000 {
			return
		}
		lines := Wrap(text, width)
		var got []string
		for _, l := range lines {
			ws := strings.Fields(l)
			if len(ws) == 0 || strings.Join(ws, " ") != l {
				t.Fatalf("line %q", l)
			}
			if utf8.RuneCountInString(l) > width && len(ws) > 1 {
				t.Fatalf("line %q over %d", l, width)
			}
			got = append(got, ws...)
		}
		if want := strings.Fields(text); !reflect.DeepEqual(got, want) && len(want)+len(got) > 0 {
			t.Fatalf("words %q, want %q", got, want)
		}
	})
}
