package notifytarget

import (
	"net/mail"
	"net/url"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]string{
		"https://hooks.example.org/rboinc?x=1": Webhook,
		"http://127.0.0.1:8080/h":              Webhook,
		"alice@example.org":                    Email,
		"a.b+chains@lab.example.ac.uk":         Email,
	}
	for in, kind := range good {
		k, a, err := Parse(in)
		if err != nil || k != kind || a != in {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q", in, k, a, err, kind)
		}
	}
	bad := map[string]string{
		"":                                               "empty",
		"ftp://example.org/x":                            `not "ftp"`,
		"file:///etc/passwd":                             `not "file"`,
		"javascript:alert(1)":                            `not "javascript"`,
		"https://user:pw@example.org/h":                  "credentials",
		"https://tok@example.org/h":                      "credentials",
		"https:///nohost":                                "no host",
		"https://example.org/h#frag":                     "fragment",
		"https://example.org/a b":                        "spaces",
		"Alice <alice@example.org>":                      "spaces",
		"alice@example.org\r\nBcc: x@y.z":                "control",
		"mailto:alice@example.org":                       "neither",
		"not-an-address":                                 "neither",
		"https://" + strings.Repeat("a", 2100) + ".org/": "too long",
	}
	for in, want := range bad {
		if _, _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"https://example.org/h", "a@b.c", "ftp://x", "x:y", "a b@c", "http://u@h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, addr, err := Parse(s)
		if err != nil {
			return
		}
		if addr != s || strings.ContainsAny(addr, " \r\n\t") {
			t.Fatalf("Parse(%q) accepted %q", s, addr)
		}
		switch kind {
		case Webhook:
			u, err := url.Parse(addr)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" {
				t.Fatalf("webhook %q accepted: %v", addr, err)
			}
		case Email:
			if a, err := mail.ParseAddress(addr); err != nil || a.Address != addr {
				t.Fatalf("address %q accepted: %v", addr, err)
			}
		default:
			t.Fatalf("kind %q", kind)
		}
	})
}
