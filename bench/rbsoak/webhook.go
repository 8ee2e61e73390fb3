package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// webhooks is the receiver of every user's notifications: it notes when
// each delivery id came and remembers which chain events came.
type webhooks struct {
	url string
	srv *http.Server
	j   *journal // each delivery is on disk before it is answered

	mu         sync.Mutex
	deliveries map[string][]time.Time // X-Rboinc-Delivery → when received
	events     map[string]struct{}    // user/group/name/type
	total      int
	// lags are how long after its event each delivery first came (the
	// event's time is in whole seconds): a target that falls behind shows
	// here before its events go missing.
	lags []time.Duration
}

// startWebhooks starts the receiver on addr (a resumed run's is on the
// address the users' webhooks name).
func startWebhooks(addr string, j *journal) (*webhooks, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	w := &webhooks{url: "http://" + ln.Addr().String(), j: j, deliveries: map[string][]time.Time{}, events: map[string]struct{}{}}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	go w.srv.Serve(ln)
	return w, nil
}

func (w *webhooks) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	// When the request came, before its body is read: the check of
	// repeats compares it with the kills of the sender.
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		rw.WriteHeader(400)
		return
	}
	var ev struct {
		User, Type, Group, Name string
		Time                    int64
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		rw.WriteHeader(400)
		return
	}
	id := r.Header.Get("X-Rboinc-Delivery")
	k := ev.User + "/" + ev.Group + "/" + ev.Name + "/" + ev.Type
	// On disk before the answer: once answered, the server sends it no
	// more, and a kill of the whole run must not lose it.
	w.j.addSync(rec{T: "hook", ID: id, Kind: k})
	w.mu.Lock()
	w.total++
	if len(w.deliveries[id]) == 0 && ev.Time > 0 {
		w.lags = append(w.lags, at.Sub(time.Unix(ev.Time, 0)))
	}
	w.deliveries[id] = append(w.deliveries[id], at)
	w.events[k] = struct{}{}
	w.mu.Unlock()
	rw.WriteHeader(204)
}

func (w *webhooks) close() { w.srv.Close() }

func (w *webhooks) has(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.events[key]
	return ok
}

// lag is the median, 99th percentile and largest of the lags.
func (w *webhooks) lag() (median, p99, largest time.Duration) {
	w.mu.Lock()
	l := slices.Clone(w.lags)
	w.mu.Unlock()
	if len(l) == 0 {
		return 0, 0, 0
	}
	slices.Sort(l)
	return l[len(l)/2], l[len(l)*99/100], l[len(l)-1]
}

// receipts are when each delivery came, and how many came in all.
func (w *webhooks) receipts() (map[string][]time.Time, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := make(map[string][]time.Time, len(w.deliveries))
	for id, ts := range w.deliveries {
		m[id] = slices.Clone(ts)
	}
	return m, w.total
}

// checkEvents waits (up to a minute) for every chain's last event and every
// group's group_done, then fails on any missing, and on any repeat that
// neither a kill of the process sending the notifications nor a failed
// attempt the notifiers logged explains (unexplainedRepeats).
func (s *soak) checkEvents() {
	var want []string
	s.mu.Lock()
	for _, g := range s.groups {
		if !g.finished {
			continue
		}
		want = append(want, g.user.name+"/"+g.name+"//group_done")
		for _, c := range g.chains {
			if c.final == "" {
				continue
			}
			typ := "chain_" + c.final
			want = append(want, g.user.name+"/"+g.name+"/"+c.name+"/"+typ)
		}
	}
	s.mu.Unlock()
	var missing []string
	deadline := time.Now().Add(time.Minute)
	for {
		missing = missing[:0]
		for _, k := range want {
			if !s.hooks.has(k) {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(missing) > 0 {
		s.problem("%d of %d events never reached the webhook, e.g. %s", len(missing), len(want), strings.Join(missing[:min(5, len(missing))], ", "))
		s.traceMissing(missing)
	}
	receipts, total := s.hooks.receipts()
	s.mu.Lock()
	kills := slices.Clone(s.senderKills)
	s.mu.Unlock()
	senders := 0
	for _, k := range kills {
		if k.sender {
			senders++
		}
	}
	repeated, unexplained := unexplainedRepeats(receipts, kills, failedAttempts(filepath.Join(s.o.work, "logs")))
	sort.Strings(unexplained)
	fmt.Printf("webhook: %d deliveries, %d events expected, %d missing, %d delivered more than once (%d kills of the server or notifier, %d of them the sender)\n",
		total, len(want), len(missing), repeated, len(kills), senders)
	median, p99, largest := s.hooks.lag()
	fmt.Printf("webhook: lag from event to delivery (event times in whole seconds): median %s, 99th percentile %s, largest %s\n",
		median.Round(time.Second), p99.Round(time.Second), largest.Round(time.Second))
	if len(unexplained) > 0 {
		s.problem("%d of %d deliveries came again with no kill of the notifications' sender between, e.g. %s",
			len(unexplained), repeated, strings.Join(unexplained[:min(5, len(unexplained))], ", "))
	}
}
