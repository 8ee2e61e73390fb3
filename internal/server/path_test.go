package server

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckDAVPath: an accepted scratch path never leaves the area.
func FuzzCheckDAVPath(f *testing.F) {
	for _, s := range []string{"", "up1/", "up1/abc", "..", "a/../../b", "a\\b", ".x", "a//b", "é/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sub string) {
		if checkDAVPath(sub) != nil {
			return
		}
		for _, seg := range strings.Split(sub, "/") {
			if seg == ".." || seg == "." || strings.HasPrefix(seg, ".") || strings.ContainsAny(seg, "\\\x00") {
				t.Fatalf("accepted %q", sub)
			}
		}
		root := "/srv/dav/alice"
		if p := filepath.Join(root, path.Clean("/"+sub)); p != root && !strings.HasPrefix(p, root+"/") {
			t.Fatalf("%q leads to %s", sub, p)
		}
	})
}

// FuzzDecodeBody: the strict decoder never panics, and what it accepts is
// one JSON object and nothing else.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{`{"group":"g"}`, `{"group":"g"} x`, `null`, `{"user":"x"}`, ` {"name":"n"}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v struct {
			Group string `json:"group"`
			Name  string `json:"name"`
		}
		if decodeBody(strings.NewReader(string(b)), &v) == nil && !strings.HasPrefix(strings.TrimLeft(string(b), " \t\r\n"), "{") {
			t.Fatalf("accepted %q", b)
		}
	})
}

func TestCheckDAVPath(t *testing.T) {
	for _, ok := range []string{"", "up1/", "up1/0123", "up1/description_file.xml", "a b", "é", strings.Repeat("n", 255)} {
		if err := checkDAVPath(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"..", "a/..", "../a", ".", "a/./b", ".hidden", "a/.git/x", "a\\b", "a//b", "a\x00", "a\nb", "\xff", strings.Repeat("n", 256), strings.Repeat("d/", 600)} {
		if err := checkDAVPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
