package main

import (
	"strings"
	"testing"
)

// The processor time of a resumed run is that of every life of the
// driver: each earlier life's as its last cpu record says, and this
// one's.
func TestCPUAcrossLives(t *testing.T) {
	const server = "server (rboinc-server serve)"
	recs := []rec{
		{T: "options", At: jat(0)},
		{T: "start", At: jat(0)},
		{T: "site", At: jat(1), Site: &siteRec{Root: "/r"}},
		{T: "cpu", At: jat(30), CPU: map[string]float64{server: 10, driverLabel: 1, "rboinc-retrieve (clients)": 4}, Runs: map[string]int{"rboinc-retrieve (clients)": 40}},
		{T: "cpu", At: jat(60), CPU: map[string]float64{server: 12, driverLabel: 2, "rboinc-retrieve (clients)": 5}, Runs: map[string]int{"rboinc-retrieve (clients)": 50}},
		{T: "resume", At: jat(100)},
		{T: "start", At: jat(100)},
		{T: "cpu", At: jat(130), CPU: map[string]float64{server: 3, driverLabel: 1}},
	}
	l, err := replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	s := &soak{led: l, cpu: newCPUBook()}
	s.cpu.live[procKey{pid: 7, start: 1}] = &procSeen{label: server, ticks: 5 * clockTick}
	s.cpu.clients["rboinc-retrieve"] = 2
	s.cpu.runs["rboinc-retrieve"] = 20
	out := strings.Join(s.cpuReport(0.5, 0), "\n")
	for _, want := range []string{
		"30 s in all" /* 12+3+5 server, 2+1+0.5 driver, 5+2 clients */, server + " ", "20.0 s (1 processes)",
		"7.0 s (70 runs)", "3.5 s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
