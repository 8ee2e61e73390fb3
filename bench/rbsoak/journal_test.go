package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A kill cuts the journal's last record short: reading it drops that
// record and cuts the file back, so that the resumed run's records start
// on a line of their own and the journal reads whole again.
func TestReadJournalTornLastRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), journalFile)
	j, err := openJournal(p, false)
	if err != nil {
		t.Fatal(err)
	}
	j.add(rec{T: "options", Args: []string{"-short"}})
	j.addSync(rec{T: "submitted", User: "soak1", Group: "b00000"})
	j.close()
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"t":"submitted","user":"soak2","gro`)
	f.Close()
	recs, err := readJournal(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Group != "b00000" {
		t.Fatalf("read %+v, want the options and one submission", recs)
	}
	j, _ = openJournal(p, false)
	j.addSync(rec{T: "purged", User: "soak1", Group: "b00000"})
	j.close()
	if recs, err = readJournal(p); err != nil || len(recs) != 3 || recs[2].T != "purged" {
		t.Fatalf("after appending: %+v, %v; want 3 whole records", recs, err)
	}
}

func TestReadJournalBadLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), journalFile)
	os.WriteFile(p, []byte("{\"t\":\"options\"}\nnot json\n{\"t\":\"start\"}\n"), 0o644)
	if _, err := readJournal(p); err == nil {
		t.Fatal("a bad line in the middle read without an error")
	}
	os.WriteFile(p, []byte("{\"t\":\"start\"}\n"), 0o644)
	if _, err := readJournal(p); err == nil {
		t.Fatal("a journal without its options read without an error")
	}
}

func jat(sec int) int64 { return time.Unix(1_700_000_000+int64(sec), 0).UnixNano() }

// The ledger of a killed run: what each check needs, booked as the live
// run booked it.
func TestReplay(t *testing.T) {
	recs := []rec{
		{T: "options", At: jat(0)},
		{T: "start", At: jat(0)},
		{T: "site", At: jat(1), Site: &siteRec{Root: "/r"}},
		{T: "submitted", At: jat(2), User: "u", Group: "g"},
		{T: "extend", At: jat(3), User: "u", Group: "g", Chain: "c19", Before: 2},
		{T: "control", At: jat(4), User: "u", Group: "g", Chain: "c13", Stay: "aborted", Steps: 2},
		// A file retrieved by a run that acknowledged it, then again.
		{T: "retrieved", At: jat(5), User: "u", Group: "g", Dir: "/w/retrieve-u-g-1", Code: 0, Files: []string{"a", "b"}},
		{T: "retrieved", At: jat(6), User: "u", Group: "g", Dir: "/w/retrieve-u-g-2", Code: -1, Files: []string{"b", "c"}},
		{T: "fault", At: jat(7), Kind: "server"},
		{T: "fault", At: jat(8), Kind: "server"},
		{T: "hook", At: jat(9), ID: "d1", Kind: "u/g/c0/chain_done"},
		{T: "sample", At: jat(10), RSS: 5, FDs: 9},
		// The resumed driver's start: a delivery received before its run
		// starts is of its life, not of the killed one's.
		{T: "resume", At: jat(90)},
		{T: "hook", At: jat(95), ID: "d2", Kind: "u/g/c1/chain_done"},
		{T: "start", At: jat(100)},
		{T: "hook", At: jat(101), ID: "d1", Kind: "u/g/c0/chain_done"},
		{T: "sample", At: jat(102), Seg: 1, RSS: 6, FDs: 9},
		{T: "finished", At: jat(110), User: "u", Group: "g", Finals: map[string]string{"c0": "done"}, Chains: 150, Steps: 149},
		{T: "checked", At: jat(110), User: "u", Group: "m001", Finals: map[string]string{"w00000": "done"}, Chains: 16, Steps: 16},
		{T: "master", At: jat(111), N: 2, Kind: "ran", Out: "done: 16 work units came back"},
		{T: "gahp", At: jat(112), N: 1, Kind: "done"},
		{T: "problem", At: jat(112), Out: "u/g/c3: ended failed, want done"},
		{T: "gahp", At: jat(113), N: 2, Kind: "begin"},
	}
	l, err := replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	if !l.submitted["u/g"] || l.extends["u/g/c19"] != 2 || l.controls["u/g/c13"].Stay != "aborted" {
		t.Errorf("submissions and controls: %v %v %v", l.submitted, l.extends, l.controls)
	}
	m := l.retrieved["u/g"]
	if m["a"].times != 1 || m["b"].times != 2 || m["c"].times != 1 || m["c"].acked {
		t.Errorf("retrieved: a %+v b %+v c %+v; want b twice (again after an acknowledged run)", *m["a"], *m["b"], *m["c"])
	}
	if !l.retrDone["/w/retrieve-u-g-2"] || l.faults["server"] != 2 {
		t.Errorf("retrievals done %v, faults %v", l.retrDone, l.faults)
	}
	if len(l.deliveries["d1"]) != 2 || l.total != 3 {
		t.Errorf("deliveries %v", l.deliveries)
	}
	if len(l.segs) != 2 || l.segs[0].last != time.Unix(0, jat(10)) {
		t.Errorf("segments %v, want two, the first ending at its last record", l.segs)
	}
	if l.finished["u/g"].Finals["c0"] != "done" || l.masterN != 2 || l.masterPhase != "ran" || l.gahpN != 2 || l.gahpDone != 1 {
		t.Errorf("finished %v, master %d %s, gahp %d %s %d", l.finished, l.masterN, l.masterPhase, l.gahpN, l.gahpPhase, l.gahpDone)
	}
	if l.chainsOK != 166 || l.stepsOK != 165 || len(l.oneStep) != 1 {
		t.Errorf("checked before the kill: %d chains, %d steps, %d one-step groups; want 166, 165, 1", l.chainsOK, l.stepsOK, len(l.oneStep))
	}
	// The kill of the whole run, at its last record, explains a repeat
	// of a delivery received before it.
	if len(l.problems) != 1 {
		t.Errorf("problems %v: a problem found before the kill must fail the resumed run", l.problems)
	}
	if len(l.kills) != 2 {
		t.Fatalf("kills %+v, want the one that ended the first life and the last one", l.kills)
	}
	if k := l.kills[0]; !k.sender || !k.at.Equal(time.Unix(0, jat(10))) {
		t.Errorf("the kill that ended the first life: %+v, want at its last record", k)
	}
	k := l.kills[len(l.kills)-1]
	if !k.sender || !k.at.Equal(time.Unix(0, jat(113))) {
		t.Errorf("the whole run's kill: %+v", k)
	}
	before := time.Unix(0, jat(112))
	if _, un := unexplainedRepeats(map[string][]time.Time{"x": {before, before.Add(time.Minute)}}, l.kills, nil); len(un) > 0 {
		t.Errorf("a repeat across the whole run's kill was not explained: %v", un)
	}
	if segs := samplesBySeg(l.samples); len(segs) != 2 || segs[1][0].rss != 6 {
		t.Errorf("samples by segment: %v", segs)
	}
}

func TestReplayRefuses(t *testing.T) {
	if _, err := replay([]rec{{T: "options"}, {T: "start"}}); err == nil {
		t.Error("a run killed before its site was ready replayed")
	}
	if _, err := replay([]rec{{T: "options"}, {T: "site", Site: &siteRec{}}, {T: "end"}}); err == nil {
		t.Error("a run that ended replayed")
	}
	if _, err := replay([]rec{{T: "options"}, {T: "site", Site: &siteRec{}}, {T: "novel"}}); err == nil {
		t.Error("a record of an unknown kind replayed")
	}
}

func TestSegmentsLine(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	segs := []segment{{start: t0, last: t0.Add(10 * time.Minute)}, {start: t0.Add(time.Hour)}}
	ran, line := segmentsLine(segs, t0.Add(90*time.Minute))
	if ran != 40*time.Minute {
		t.Errorf("ran %s, want 40m (10m + 30m; the 50m stopped not counted)", ran)
	}
	if line == "" {
		t.Error("no line for a run of two lives")
	}
}

// The journal's cost a record, written (add) and made durable (addSync,
// one fsync each when nothing else waits): go test -bench Journal
// ./bench/rbsoak/ -run XXX.
func BenchmarkJournalAdd(b *testing.B) {
	j, _ := openJournal(filepath.Join(b.TempDir(), journalFile), false)
	defer j.close()
	for b.Loop() {
		j.add(rec{T: "sample", Seg: 1, Steps: 123456789, RSS: 50 << 20, FDs: 40, NFile: 12})
	}
}

func BenchmarkJournalAddSync(b *testing.B) {
	j, _ := openJournal(filepath.Join(b.TempDir(), journalFile), false)
	defer j.close()
	for b.Loop() {
		j.addSync(rec{T: "hook", ID: "0123456789abcdef", Kind: "soak1/b00001/c17/step_done"})
	}
}
