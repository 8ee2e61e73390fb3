package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// webhooks is the receiver of every user's notifications: it counts each
// delivery id and remembers which chain events came.
type webhooks struct {
	url string
	srv *http.Server

	mu         sync.Mutex
	deliveries map[string]int      // X-Rboinc-Delivery → times received
	events     map[string]struct{} // user/group/name/type
	total      int
}

func startWebhooks() (*webhooks, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &webhooks{url: "http://" + ln.Addr().String(), deliveries: map[string]int{}, events: map[string]struct{}{}}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	go w.srv.Serve(ln)
	return w, nil
}

func (w *webhooks) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		rw.WriteHeader(400)
		return
	}
	var ev struct {
		User, Type, Group, Name string
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		rw.WriteHeader(400)
		return
	}
	w.mu.Lock()
	w.total++
	w.deliveries[r.Header.Get("X-Rboinc-Delivery")]++
	w.events[ev.User+"/"+ev.Group+"/"+ev.Name+"/"+ev.Type] = struct{}{}
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

// repeats are the deliveries received more than once.
func (w *webhooks) repeats() (ids []string, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, n := range w.deliveries {
		if n > 1 {
			ids = append(ids, fmt.Sprintf("%s (%d times)", id, n))
		}
	}
	sort.Strings(ids)
	return ids, w.total
}

// checkEvents waits (up to a minute) for every chain's last event and every
// group's group_done, then fails on any missing, and on repeats beyond
// what the notifier's kills explain.
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
	}
	reps, total := s.hooks.repeats()
	s.mu.Lock()
	kills := s.faults["notifier"] + s.faults["server"]
	s.mu.Unlock()
	fmt.Printf("webhook: %d deliveries, %d events expected, %d missing, %d delivered more than once\n", total, len(want), len(missing), len(reps))
	// A notifier killed between a webhook's answer and marking the event
	// sent sends it again, under the same delivery id (documented: the
	// receiver drops the repeat). More repeats than kills is a defect.
	if len(reps) > kills {
		s.problem("%d deliveries came more than once (more than the %d notifier and server kills explain), e.g. %s", len(reps), kills, strings.Join(reps[:min(5, len(reps))], ", "))
	}
}
