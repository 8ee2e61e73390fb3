package main

import "time"

// bookRetry counts a failed try of what, and journals it durably: a
// resumed run's counts are the journal's, and a stop of the machine must
// not lose one (the end checks compare them with the server's).
func (s *soak) bookRetry(what string) { s.book(s.retries, "retry", what) }

// retried books a failed try of what and waits about pause before the
// next (jittered, so that the clients a fault failed do not come back in
// step).
func (s *soak) retried(what string, pause time.Duration) {
	s.bookRetry(what)
	time.Sleep(s.jitter(pause))
}

// bookFault counts a fault of kind k done, and journals it durably, as
// bookRetry.
func (s *soak) bookFault(k string) { s.book(s.faults, "fault", k) }

// book adds one to counts[kind] and journals a record of type t, on disk
// before it returns.
func (s *soak) book(counts map[string]int, t, kind string) {
	s.mu.Lock()
	counts[kind]++
	n := s.j.add(rec{T: t, Kind: kind})
	s.mu.Unlock()
	s.j.sync(n)
}
