package notifytarget

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Verifying a webhook call. Each call is a POST of one JSON event whose
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

// Verify tells whether header, the SignatureHeader of a webhook call,
// signs body under secret. An empty secret verifies nothing: anyone can
// make a signature under the empty key.
func Verify(secret string, body []byte, header string) bool {
	if secret == "" {
		return false
	}
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	sum, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(sum, m.Sum(nil))
}
