package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
)

// A webhook is delivered at least once: a process sending notifications
// that is killed between the receiver's answer and recording the delivery
// leaves it to be sent again (after its claim's lease) under the same
// X-Rboinc-Delivery id. It has up to notifyParallel batches in flight, each
// of up to notifyBatch deliveries of one target recorded together, so one
// kill may repeat several of each. A call the sender counted as failed (its
// answer not within the call's timeout, the connection cut) may have
// reached the receiver too, and is sent again: the notifiers log each such
// attempt with its event. A batch sent whose outcome could not be recorded
// before its claim ran out (MariaDB away, or its write lock held long) is
// recorded once the database is back, and its deliveries are sent again
// only if another notifier took them first, or the notifier stopped
// before it could record them: the notifier logs those with their events
// too. Only these explain a repeat: a call slower than its claim cannot be
// (no call starts later than 3 call timeouts before the claim ends), nor
// a live notifier judged gone (its lease is renewed whoever holds the
// write lock), nor a commit lost (MariaDB flushes its log at every commit
// to the OS, which a kill of mysqld does not lose).

const (
	// redeliverySlack: a request the killed sender wrote just before it
	// died may be read by the receiver a moment after the kill was seen.
	redeliverySlack = time.Second
	// redeliveryLease bounds how long before a kill a delivery may have
	// been received and still not be recorded: the notifier's claim lease
	// (notifyLease in internal/engine/notify.go), after which the delivery
	// was recorded or given up (a repeat no kill explains).
	redeliveryLease = 90 * time.Second
)

// senderKill is a kill -9 of the server or the notifier, noted once the
// process was gone.
type senderKill struct {
	kind string
	at   time.Time
	// sent is when the signal was sent (zero: not known, a kill read back
	// from the journal): the next sender may repeat a delivery before the
	// killed process is reaped and at is noted (the server waiting on the
	// notifier lock takes over at once).
	sent time.Time
	// sender: the process held the notifier lock (it sent the
	// notifications) when it was killed, or that could not be told.
	sender bool
}

// unexplainedRepeats checks each repeat of each delivery (in the order
// received) against the kills: the i-th receipt after the first is
// explained by a kill of the process sending notifications that came
// after the previous receipt (less the slack, no more than the lease
// later) and before this one; each kill explains one repeat of a delivery.
// A repeat no kill explains is explained by a failed attempt of the same
// event logged by a notifier (failed: their count by event id), each
// attempt one repeat. It returns the deliveries received more than once
// and those with a repeat neither explains.
func unexplainedRepeats(receipts map[string][]time.Time, kills []senderKill, failed map[string]int) (repeated int, unexplained []string) {
	for id, ts := range receipts {
		if len(ts) < 2 {
			continue
		}
		repeated++
		used := make([]bool, len(kills))
		for i := 1; i < len(ts); i++ {
			prev, at := ts[i-1], ts[i]
			found := false
			for j, k := range kills {
				if used[j] || !k.sender {
					continue
				}
				from := k.sent
				if from.IsZero() {
					from = k.at.Add(-redeliverySlack)
				}
				if from.Before(at) && !prev.After(k.at.Add(redeliverySlack)) && k.at.Sub(prev) <= redeliveryLease {
					used[j], found = true, true
					break
				}
			}
			if !found && failed[id] > 0 {
				failed[id]--
				found = true
			}
			if !found {
				unexplained = append(unexplained, fmt.Sprintf("%s (received %s, again %s after, no kill of the sender between)",
					id, ts[0].Format("15:04:05.000"), at.Sub(prev).Round(time.Millisecond)))
				break
			}
		}
	}
	return repeated, unexplained
}

// failedAttemptMark is how a notifier logs an attempt that failed and will
// be made again (internal/engine's deliver), with the event as event=ID.
const failedAttemptMark = "notification not delivered; will try again"

// failedAttempts counts, by event id, the attempts the logs in dir (every
// process's, both hosts') record as possibly received and made again: the
// failed attempts (event=ID), and the deliveries sent whose outcome was
// never recorded or was recorded only after another notifier took them
// once their claim ran out (events=ID,ID,...). A log that cannot be read
// counts none (its repeats stay unexplained).
func failedAttempts(dir string) map[string]int {
	out := map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, failedAttemptMark) {
				for _, field := range strings.Fields(line) {
					if id, ok := strings.CutPrefix(field, "event="); ok {
						out[id]++
						break
					}
				}
				continue
			}
			if !strings.Contains(line, engine.NotifyTakenMessage) && !strings.Contains(line, engine.NotifyUnrecordedMessage) {
				continue
			}
			for _, field := range strings.Fields(line) {
				if ids, ok := strings.CutPrefix(field, "events="); ok {
					for id := range strings.SplitSeq(strings.Trim(ids, `"`), ",") {
						if id != "" {
							out[id]++
						}
					}
					break
				}
			}
		}
		f.Close()
	}
	return out
}

// killSender kills p (the server or the notifier) with SIGKILL and notes
// the kill for the webhook check, with whether p held the notifier lock.
func (s *soak) killSender(p *proc) {
	holder, known := s.notifierLockHolder()
	pid := p.pid()
	sent := time.Now()
	p.kill9()
	s.noteSenderKill(senderKill{kind: p.name, at: time.Now(), sent: sent, sender: !known || (pid != 0 && holder == pid)})
}

// noteSenderKill books a kill for the webhook check, in memory and in the
// journal: a resumed run judges the repeats of its earlier lives by the
// kills their journal kept.
func (s *soak) noteSenderKill(k senderKill) {
	s.mu.Lock()
	s.senderKills = append(s.senderKills, k)
	s.mu.Unlock()
	s.j.addSync(rec{T: "kill", Kind: k.kind, Sender: k.sender})
}

// notifierLockHolder is the process holding the flock on the server
// root's notifier lock (from /proc/locks); known is false when that
// cannot be told.
func (s *soak) notifierLockHolder() (pid int, known bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(s.root, daemon.NotifierLockName), &st); err != nil {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	// "1: FLOCK  ADVISORY  WRITE 4242 00:2a:123456 0 EOF"
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[2] == "->" || !strings.HasSuffix(fs[5], ino) {
			continue
		}
		if pid, err = strconv.Atoi(fs[4]); err == nil {
			return pid, true
		}
	}
	return 0, false
}
