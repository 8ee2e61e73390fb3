package main

import (
	"testing"
	"time"
)

// samples of a server whose descriptors swing with the requests in flight:
// early as in the lead's run (25 to 38), late busier (half the samples
// with 60 to 70 open), and fds(i) added to the i-th.
func swinging(n int, fds func(i int) int) []sample {
	early := []int{25, 29, 32, 35, 38, 27, 33}
	late := []int{28, 64, 70, 30, 66, 64, 68, 29}
	ss := make([]sample, n)
	for i := range ss {
		f := early[i%len(early)]
		if i >= n*3/4 {
			f = late[i%len(late)]
		}
		ss[i] = sample{at: time.Duration(i) * 3 * time.Second, rss: 25 << 20, fds: f + fds(i), files: 12}
	}
	return ss
}

func TestGrowthIgnoresRequestsInFlight(t *testing.T) {
	line, problems := growth(swinging(92, func(int) int { return 0 }))
	if len(problems) != 0 {
		t.Errorf("a flat server with a busier end judged as growing: %q (%s)", problems, line)
	}
}

func TestGrowthFindsADescriptorLeak(t *testing.T) {
	// One descriptor lost per request, a request every 3 seconds: far
	// slower than the soak's load, still a leak.
	_, problems := growth(swinging(92, func(i int) int { return i }))
	if len(problems) != 1 {
		t.Errorf("a leak of a descriptor per sample: problems %q, want one", problems)
	}
}

// The soak's run at load 30: sockets in flight raised the late lower
// quartile from 25 to 49 with the files flat.
func TestGrowthIgnoresABusyEnd(t *testing.T) {
	ss := swinging(92, func(int) int { return 0 })
	for i := len(ss) * 3 / 4; i < len(ss); i++ {
		ss[i].fds += 24
	}
	if line, problems := growth(ss); len(problems) != 0 {
		t.Errorf("sockets in flight judged as a leak: %q (%s)", problems, line)
	}
}

func TestGrowthFindsAFileLeak(t *testing.T) {
	ss := swinging(92, func(int) int { return 0 })
	for i := range ss {
		ss[i].files += i / 4 // a file left open every fourth sample
		ss[i].fds += i / 4
	}
	if _, problems := growth(ss); len(problems) != 1 {
		t.Errorf("a file left open every fourth sample: problems %q, want one", problems)
	}
}

func TestGrowthFindsAMemoryLeak(t *testing.T) {
	ss := swinging(92, func(int) int { return 0 })
	for i := range ss {
		ss[i].rss += int64(i) << 20
	}
	if _, problems := growth(ss); len(problems) != 1 {
		t.Errorf("memory growing 1 MiB a sample: problems %q, want one", problems)
	}
}

// TestParseStat: a /proc/PID/stat line whose command holds spaces and
// parentheses gives the start time, the process's own processor time and
// its reaped children's (the stand-in's app runs, which live too short
// to be sampled).
func TestParseStat(t *testing.T) {
	line := "4242 (rboinc (x) serve) S 1 4242 4242 0 -1 4194560 100 0 0 0 120 30 700 55 20 0 9 0 98765 1000 200"
	start, ticks, kids, ok := parseStat(line)
	if !ok || start != 98765 || ticks != 150 || kids != 755 {
		t.Errorf("parseStat = %d %d %d %v, want start 98765, own 150 ticks, children 755", start, ticks, kids, ok)
	}
	if _, _, _, ok := parseStat("4242 (short) S 1"); ok {
		t.Error("a cut line was read")
	}
}
