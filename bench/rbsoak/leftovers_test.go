package main

import "testing"

// What the leftover check passes over under the root: the fixed layout,
// logs, locks, and the hook path's one marker; a spooled call or a result
// is a leftover.
func TestNotRboinc(t *testing.T) {
	for rel, want := range map[string]bool{
		"spool/.last-call":         true, // the hook path's marker (seen as a leftover in the first hook run)
		"logs/server.log":          true,
		"boinc/templates/rboinc/x": true,
		"spool/1733457600-42.call": false,
		"results/soak1/b00001/c0":  false,
		"pool/ab/cdef":             false,
	} {
		if got := notRboinc(rel); got != want {
			t.Errorf("notRboinc(%q) = %v, want %v", rel, got, want)
		}
	}
}
