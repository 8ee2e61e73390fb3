// Package notifytarget reads the notification targets users give (a
// webhook URL or an e-mail address) the same way in the clients, which
// check them before sending a submission, and in the server, which
// registers them.
//
// # Verifying a webhook call
//
// Each call is a POST of one JSON event whose
// header SignatureHeader (X-Rboinc-Signature) is
//
//	sha256=<lower-case hex of HMAC-SHA256(key = the user's secret, message = the raw request body)>
//
// The secret is the user's own: rboinc-retrieve -notify-secret prints it
// (GET /api/v1/notify/secret), -notify-secret-rotate replaces it. A
// receiver reads the body as bytes, before any JSON decoding, computes the
// HMAC over exactly those bytes, and compares it with the header in
// constant time (hmac.Equal in Go, hmac.compare_digest in Python,
// crypto.timingSafeEqual in Node), refusing the call (401) on any
// difference, a missing header, or an empty secret. In Python:
//
//	expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
//	ok = secret != "" and hmac.compare_digest(expected, request.headers.get("X-Rboinc-Signature", ""))
//
// Verify does this in Go. X-Rboinc-Delivery (the event's id) lets a
// receiver drop a repeated delivery: a call whose answer was lost is sent
// again.
package notifytarget

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"
)

// Kinds of target.
const (
	Webhook = "webhook"
	Email   = "email"
)

// SignatureHeader carries a webhook body's HMAC-SHA256 under the user's
// secret, as "sha256=<hex>".
const SignatureHeader = "X-Rboinc-Signature"

// Parse reads a notification target as users write it: an
// http(s) URL is a webhook, anything else must be one bare e-mail address.
func Parse(s string) (kind, address string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("a notification target is empty: give a webhook URL (https://...) or an e-mail address")
	}
	if len(s) > 2048 || strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r == 0x7f }) >= 0 {
		return "", "", fmt.Errorf("notification target %q: too long, or holds spaces or control characters", s)
	}
	if strings.Contains(s, ":") && !strings.Contains(s, "@") || strings.Contains(s, "://") {
		return webhook(s)
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || len(s) > 254 {
		return "", "", fmt.Errorf("notification target %q is neither an http(s) URL nor a bare e-mail address (user@example.org)", s)
	}
	return Email, s, nil
}

// webhook checks a webhook URL: http or https, a host, no
// credentials (the signature authenticates), no fragment.
func webhook(s string) (kind, address string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "", fmt.Errorf("webhook URL %q: %w", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "", fmt.Errorf("webhook URL %q: only http and https URLs can be notified, not %q", s, u.Scheme)
	case u.User != nil:
		return "", "", fmt.Errorf("webhook URL %q holds credentials: leave them out (each call is signed with your secret, header %s)", s, SignatureHeader)
	case u.Host == "" || u.Hostname() == "":
		return "", "", fmt.Errorf("webhook URL %q names no host", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", "", fmt.Errorf("webhook URL %q has a #fragment, which is never sent", s)
	}
	return Webhook, s, nil
}
