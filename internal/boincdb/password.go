package boincdb

import "strings"

// HasPassword tells whether a database address (mysql://USER:PASS@...)
// carries a password: such an address must not be shown, logged or put
// on a command line, where every user of the host sees it (ps).
func HasPassword(s string) bool {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return false
	}
	head := s[:at]
	if i := strings.Index(head, "://"); i >= 0 {
		head = head[i+3:]
	}
	_, pass, ok := strings.Cut(head, ":")
	return ok && pass != ""
}
