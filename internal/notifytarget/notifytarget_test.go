package notifytarget

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
	for _, s := range []string{"https://example.org/h", "a@b.c", "ftp://x", "x:y", "a b@c", "http://u@h/",
		"http://[::1]:8080/h", "http://169.254.169.254/latest", "http://0x7f.1/", "http://[::ffff:127.0.0.1]/", "http://localhost./",
		"http://%31%32%37.0.0.1/", "victim@[127.0.0.1]", "a@b.c,d@e.f"} {
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

// TestVerify: the documented verification accepts the server's signature
// under the user's secret and refuses one forged under the empty key (as
// every webhook of a submission was signed before it had a secret) or any
// other key, and any change to the body.
func TestVerify(t *testing.T) {
	body := []byte(`{"id":7,"type":"chain_done","group":"g","name":"c1"}`)
	secret := "3f1b0c9e5a7d4e2f8b6a1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f"
	sign := func(key string, b []byte) string {
		m := hmac.New(sha256.New, []byte(key))
		m.Write(b)
		return "sha256=" + hex.EncodeToString(m.Sum(nil))
	}
	if !Verify(secret, body, sign(secret, body)) {
		t.Fatal("the genuine signature was refused")
	}
	for name, forged := range map[string]string{
		"empty key":     sign("", body),
		"wrong key":     sign("not-the-secret", body),
		"no prefix":     strings.TrimPrefix(sign(secret, body), "sha256="),
		"bad hex":       "sha256=" + strings.ToUpper(strings.TrimPrefix(sign(secret, body), "sha256=")) + "zz",
		"truncated":     sign(secret, body)[:40],
		"other body":    sign(secret, []byte(`{"id":8}`)),
		"empty":         "",
		"sha1 prefixed": "sha1=" + strings.TrimPrefix(sign(secret, body), "sha256="),
	} {
		if Verify(secret, body, forged) {
			t.Errorf("%s: forged signature %q accepted", name, forged)
		}
	}
	// A receiver that was never given a secret accepts nothing, not even
	// a signature under the empty key.
	if Verify("", body, sign("", body)) {
		t.Error("Verify with an empty secret accepted the empty key's signature")
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("secret", []byte(`{"id":1}`), "sha256=00")
	f.Add("", []byte{}, "")
	f.Fuzz(func(t *testing.T, secret string, body []byte, header string) {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		genuine := "sha256=" + hex.EncodeToString(m.Sum(nil))
		if Verify(secret, body, header) && (secret == "" || !strings.EqualFold(header, genuine)) {
			t.Fatalf("Verify(%q, %q, %q) accepted a header that is not the signature %q", secret, body, header, genuine)
		}
		if secret != "" && !Verify(secret, body, genuine) {
			t.Fatal("the genuine signature was refused")
		}
	})
}
