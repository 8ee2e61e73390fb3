package main

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The second host needs the state in MariaDB: on SQLite the kind is
// skipped with the reason, not run.
func TestHost2SkippedOnSQLite(t *testing.T) {
	why := host2Skip(false)
	if why == "" || !strings.Contains(why, "MariaDB") {
		t.Errorf("host2 on SQLite: skip reason %q, want one naming MariaDB", why)
	}
}

// A host2 fault kills the process sending notifications: its kill is in
// the journal, so that a run resumed after a kill of the driver still
// explains the repeats it caused (the 1,000,000-work-unit run, resumed 16
// times, left about 180 such repeats unexplained: its host2 kills were
// only in the memory of the driver's life that made them).
func TestHost2KillJournaled(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(filepath.Join(dir, journalFile), false)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	for _, r := range []rec{{T: "options"}, {T: "start"}, {T: "site", Site: &siteRec{}}} {
		j.addSync(r)
	}
	s := &soak{rng: rand.New(rand.NewPCG(1, 7)), faults: map[string]int{}, j: j}
	var ps []*proc
	for _, name := range []string{"host B's server", "host B's notifier"} {
		p := &proc{name: name, args: []string{"sleep", "600"}, log: filepath.Join(dir, "sleep.log")}
		if err := p.start(); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	s.hostB = &host2{url: "http://127.0.0.1:1/rboinc_cgi", procs: ps}
	defer func() {
		for _, p := range ps {
			p.kill9()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // host B is not waited for
	s.killHost2(ctx)
	j.close()
	recs, err := readJournal(filepath.Join(dir, journalFile))
	if err != nil {
		t.Fatal(err)
	}
	l, err := replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	var host2 []senderKill
	for _, k := range l.kills {
		if k.kind == "host2" {
			host2 = append(host2, k)
		}
	}
	if len(host2) != 1 || !host2[0].sender || host2[0].at.Before(before) {
		t.Fatalf("kills read back from the journal: %+v; want one host2 kill of the sender", l.kills)
	}
	// A delivery received just before the fault and again after it (from
	// the other host's notifier) is explained on resume.
	rcv := map[string][]time.Time{"1072846": {before.Add(-500 * time.Millisecond), host2[0].at.Add(500 * time.Millisecond)}}
	if _, un := unexplainedRepeats(rcv, host2, nil); len(un) > 0 {
		t.Errorf("a repeat across a host2 fault, read back from the journal: unexplained %v", un)
	}
}
