package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

var t0 = time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// The CI run that failed on the old count: 14 kills of the server and the
// notifier, 15 deliveries repeated, because one notifier killed with
// several deliveries in flight repeats them all (after the claim's lease).
func TestOneKillExplainsSeveralRepeats(t *testing.T) {
	var kills []senderKill
	for i := range 14 {
		kills = append(kills, senderKill{kind: "notifier", at: at(float64(10 * i)), sender: i == 3})
	}
	receipts := map[string][]time.Time{}
	for i := range 15 {
		// Received just before the notifier's kill at 30 s, sent again
		// 90 s later by its successor.
		receipts[fmt.Sprint(i)] = []time.Time{at(29.5 + float64(i)/100), at(120 + float64(i))}
	}
	receipts["once"] = []time.Time{at(5)}
	repeated, unexplained := unexplainedRepeats(receipts, kills, nil)
	if repeated != 15 || len(unexplained) != 0 {
		t.Errorf("15 deliveries in flight at one kill of the sender: repeated %d, unexplained %q; want 15 and none", repeated, unexplained)
	}
}

func TestRepeatWithoutAKillOfTheSender(t *testing.T) {
	kills := []senderKill{
		{kind: "notifier", at: at(10), sender: true},  // before the first receipt
		{kind: "server", at: at(40), sender: false},   // not sending then
		{kind: "notifier", at: at(300), sender: true}, // after the repeat
	}
	receipts := map[string][]time.Time{"7": {at(20), at(110)}}
	if _, unexplained := unexplainedRepeats(receipts, kills, nil); len(unexplained) != 1 {
		t.Errorf("a repeat with no kill of the sender between its receipts: unexplained %q, want it", unexplained)
	}
}

// A kill explains one repeat of a delivery, a kill seen a moment before
// the receipt (the request read late) still counts, and a kill more than
// the claim's lease after the first receipt does not.
func TestKillsPerRepeat(t *testing.T) {
	kills := []senderKill{{kind: "notifier", at: at(50), sender: true}}
	for _, c := range []struct {
		name     string
		receipts []time.Time
		want     int
	}{
		{"twice after one kill", []time.Time{at(49), at(140), at(141)}, 1},
		{"read just after the kill", []time.Time{at(50.5), at(140)}, 0},
		{"read long after the kill", []time.Time{at(52), at(140)}, 1},
		{"kill beyond the lease", []time.Time{at(-45), at(60)}, 1},
	} {
		if _, unexplained := unexplainedRepeats(map[string][]time.Time{"1": c.receipts}, kills, nil); len(unexplained) != c.want {
			t.Errorf("%s: unexplained %q, want %d", c.name, unexplained, c.want)
		}
	}
}

// A repeat with no kill of the sender is explained by a failed attempt of
// its event that a notifier logged (a call whose answer did not come in
// time may have reached the receiver), one attempt a repeat; another
// event's failure explains nothing.
func TestRepeatAfterAFailedAttempt(t *testing.T) {
	dir := t.TempDir()
	log := `time=2026-12-06T15:29:57.001Z level=WARN msg="notification not delivered; will try again" user_id=1 target=http://127.0.0.1:1/soak1 event=37230 attempt=1 err="context deadline exceeded (Client.Timeout exceeded while awaiting headers)" retry_in=5s
time=2026-12-06T15:29:58.001Z level=WARN msg="notification not delivered; will try again" user_id=1 target=http://127.0.0.1:1/soak1 event=99 attempt=1 err=x retry_in=5s
time=2026-12-06T15:29:59.001Z level=INFO msg="something else" event=7
`
	if err := os.WriteFile(filepath.Join(dir, "hostb-notifier.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := failedAttempts(dir)
	if failed["37230"] != 1 || failed["99"] != 1 || len(failed) != 2 {
		t.Fatalf("failed attempts read from the logs: %v, want 37230 and 99 once each", failed)
	}
	receipts := map[string][]time.Time{
		"37230": {at(20), at(170)},
		"7":     {at(20), at(170)},
		"99":    {at(20), at(40), at(60)},
	}
	_, unexplained := unexplainedRepeats(receipts, nil, failed)
	sort.Strings(unexplained)
	if len(unexplained) != 2 || !strings.HasPrefix(unexplained[0], "7 ") || !strings.HasPrefix(unexplained[1], "99 ") {
		t.Errorf("unexplained %q, want 7 (no failure logged) and 99 (one failure, two repeats)", unexplained)
	}
}

// s4's three repeats: the notifier was killed with three deliveries
// received and not recorded, and the server waiting on the notifier lock
// sent them again before the killed process was reaped and its kill
// noted. The kill, sent before the repeats, explains them.
func TestRepeatBeforeTheKillWasNoted(t *testing.T) {
	kills := []senderKill{{kind: "notifier", sent: at(49.6), at: at(50.2), sender: true}}
	receipts := map[string][]time.Time{"1470": {at(49.25), at(49.8)}}
	if _, unexplained := unexplainedRepeats(receipts, kills, nil); len(unexplained) != 0 {
		t.Errorf("a repeat after the kill was sent, before it was noted: unexplained %q, want none", unexplained)
	}
	// Before the signal was sent, nothing explains it.
	receipts = map[string][]time.Time{"1470": {at(49.25), at(49.5)}}
	if _, unexplained := unexplainedRepeats(receipts, kills, nil); len(unexplained) != 1 {
		t.Errorf("a repeat before the kill was sent: unexplained %q, want it", unexplained)
	}
}

// A repeat with no kill of the sender is explained by a delivery the
// notifier sent and logged as possibly sent again: its outcome never
// recorded (the database away past the notifier's stop), or recorded
// only after another notifier took it once its claim ran out; one record
// a repeat. A delivery taken while its claim held (a defect) explains
// nothing.
func TestRepeatAfterAnOutcomeNotRecorded(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "notifier.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(f, nil)) // as the notifier logs
	log.Error(engine.NotifyUnrecordedMessage, "err", "state database: dial unix /tmp/x/mysqld.sock: connect: no such file or directory", "sent", 2, "events", "1928361,1928362")
	log.Warn(engine.NotifyTakenMessage, "events", "1072846")
	log.Error(engine.NotifyUnrecordedMessage, "err", "x", "sent", 0, "events", "")
	log.Error("notifications sent were taken by another notifier while this one's claim held (they may be sent twice)", "events", "5")
	f.Close()
	got := failedAttempts(dir)
	if fmt.Sprint(got) != "map[1072846:1 1928361:1 1928362:1]" {
		t.Fatalf("read from the log: %v, want 1072846, 1928361 and 1928362 once each", got)
	}
	receipts := map[string][]time.Time{
		"1928361": {at(20), at(140)},
		"1072846": {at(20), at(20.5), at(21)},
		"5":       {at(20), at(21)},
	}
	_, unexplained := unexplainedRepeats(receipts, nil, got)
	sort.Strings(unexplained)
	if len(unexplained) != 2 || !strings.HasPrefix(unexplained[0], "1072846 ") || !strings.HasPrefix(unexplained[1], "5 ") {
		t.Errorf("unexplained %q, want 1072846 (one record, two repeats) and 5 (taken while its claim held)", unexplained)
	}
}
