package engine

import (
	"errors"
	"strings"
	"syscall"
)

// IsNoSpace reports whether err comes from a full disk (or a disk quota):
// the system's ENOSPC or EDQUOT, SQLite's "database or disk is full", or a
// program (create_work, the encoder) that said so on its error output.
// Such a failure is the server's, not the request's or the chain's: it is
// answered 507 and retried, never blamed on a chain.
func IsNoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "no space left on device") ||
		strings.Contains(msg, "disk quota exceeded")
}
