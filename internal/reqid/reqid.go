// Package reqid makes the identifiers that tie an answer a user sees to
// the server log's line about it: a failure inside the server is answered
// with a generic message and the identifier, never with the internal
// error's text (paths, SQL, addresses), which goes only to the log.
package reqid

import (
	"crypto/rand"
	"encoding/hex"
)

// Header carries the identifier in an HTTP answer.
const Header = "X-Rboinc-Request-Id"

// New is a fresh identifier: 12 hex digits, unique enough to find one
// line in a server's log.
func New() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Message is what a user is told of an internal failure known by id.
func Message(id string) string {
	return "internal server error (request " + id + "): the server's administrator finds the cause in the server's log under this request id"
}
