package main

import "time"

// bookRetry counts a failed try of what, and journals it durably: a
// resumed run's counts are the journal's, and a stop of the machine must
// not lose one (the end checks compare them with the server's).
func (s *soak) bookRetry(what string) {
	s.mu.Lock()
	s.retries[what]++
	n := s.j.add(rec{T: "retry", Kind: what})
	s.mu.Unlock()
	s.j.sync(n)
}

// retried books a failed try of what and waits about pause before the
// next (jittered, so that the clients a fault failed do not come back in
// step).
func (s *soak) retried(what string, pause time.Duration) {
	s.bookRetry(what)
	time.Sleep(s.jitter(pause))
}

// bookFault counts a fault of kind k done, and journals it durably, as
// bookRetry.
func (s *soak) bookFault(k string) {
	s.mu.Lock()
	s.faults[k]++
	n := s.j.add(rec{T: "fault", Kind: k})
	s.mu.Unlock()
	s.j.sync(n)
}
