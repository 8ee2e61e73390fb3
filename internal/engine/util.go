package engine

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"regexp"
)

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

var uploadIDRE = regexp.MustCompile(`^up[0-9a-f]{32}$`)

func validUploadID(s string) bool { return uploadIDRE.MatchString(s) }

func newUploadID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "up" + hex.EncodeToString(b)
}
