package e2e

import "time"

// statusPause is the pause after the n-th look (from 0) of a poll that runs
// rboinc-retrieve -status: 100 ms at first, then half again longer each look
// up to 1 s. Each look is a process of its own and a request to the server
// (under Apache one more process, the CGI), and a step of the stand-in
// takes seconds: a look every 100 ms for the whole of a long wait cost
// processor time and proved nothing more than a look a second.
func statusPause(n int) time.Duration {
	d := 100 * time.Millisecond
	for i := 0; i < n && d < time.Second; i++ {
		d = d * 3 / 2
	}
	return min(d, time.Second)
}
