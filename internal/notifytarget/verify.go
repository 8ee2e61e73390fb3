package notifytarget

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

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
