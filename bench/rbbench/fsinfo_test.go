package main

import "testing"

// Only ext4 without a journal is noted: /proc is no ext4 at all.
func TestJournalNoteOnlyForExt4(t *testing.T) {
	if n := journalNote("/proc"); n != "" {
		t.Fatalf("journalNote(/proc) = %q", n)
	}
	if n := journalNote("/no/such/dir"); n != "" {
		t.Fatalf("journalNote of a missing directory = %q", n)
	}
}
