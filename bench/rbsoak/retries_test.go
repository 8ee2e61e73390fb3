package main

import (
	"path/filepath"
	"testing"
)

// Retries and faults are durable in the journal when booked (a stop of
// the machine right after loses none: a resumed run's counts are the
// journal's), and replay gives the counts back.
func TestRetriesAndFaultsDurable(t *testing.T) {
	p := filepath.Join(t.TempDir(), journalFile)
	j, err := openJournal(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	s := &soak{j: j, retries: map[string]int{}, faults: map[string]int{}}
	j.add(rec{T: "options"})
	j.add(rec{T: "start"})
	j.add(rec{T: "site", Site: &siteRec{Root: "/r"}})
	s.bookRetry("retrieve")
	s.bookRetry("retrieve")
	s.bookFault("server")
	if j.synced != j.n {
		t.Fatalf("%d of %d records on disk after booking retries and a fault", j.synced, j.n)
	}
	recs, err := readJournal(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	if l.retries["retrieve"] != 2 || l.faults["server"] != 1 || s.retries["retrieve"] != 2 || s.faults["server"] != 1 {
		t.Fatalf("replayed retries %v faults %v, live %v %v; want 2 retrieve retries, 1 server fault", l.retries, l.faults, s.retries, s.faults)
	}
}
