package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// checkTemp fails on files left in the TMPDIR every process of the soak
// was given. The MariaDB install its database servers are copied from is
// kept there on purpose (internal/mariadbtest).
func (s *soak) checkTemp() {
	var left []string
	ents, _ := os.ReadDir(s.tmp)
	for _, e := range ents {
		if !mariadbtest.IsTemplate(e.Name()) {
			left = append(left, e.Name())
		}
	}
	if len(left) > 0 {
		s.problem("%d temporary files left in TMPDIR: %s", len(left), strings.Join(left[:min(8, len(left))], ", "))
	}
}

// report prints the figures of the run.
func (s *soak) report(elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := elapsed.Hours()
	fmt.Printf("\n== figures (%s, %s)\n", map[bool]string{false: "SQLite", true: "MariaDB"}[s.o.mariadb], elapsed.Round(time.Second))
	fmt.Printf("chains checked: %d (%.0f per hour); steps done: %d (%.0f per hour)\n", s.chainsOK, float64(s.chainsOK)/h, s.stepsOK, float64(s.stepsOK)/h)
	if s.wuErr != nil {
		fmt.Printf("work units made and finished: not counted (%v)\n", s.wuErr)
	} else {
		fmt.Printf("work units made: %d; finished by BOINC: %d (%.0f per hour)\n", s.wuAll, s.wuDone, float64(s.wuDone)/h)
	}
	var ks []string
	for _, k := range allFaults {
		if n, ok := s.faults[k]; ok {
			ks = append(ks, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Printf("faults survived: %s\n", strings.Join(ks, ", "))
	s.masters.mu.Lock()
	fmt.Printf("master programs: %d tags of %d work units (adaptive-master, killed and started again)\n", s.masters.started, masterTarget)
	s.masters.mu.Unlock()
	fmt.Printf("GAHP: %d batches of %d jobs (rboinc-gahp driven as HTCondor's gridmanager does)\n", s.gahpBatches, gahpJobs)
	for k, why := range s.skipped {
		fmt.Printf("fault %s not injected: %s\n", k, why)
	}
	var rs []string
	for k, n := range s.retries {
		rs = append(rs, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(rs)
	fmt.Printf("client retries (a failed run tried again): %s\n", strings.Join(rs, ", "))
	fmt.Printf("bytes left behind: %d\n", s.leftBytes)
	fmt.Println(s.j.figures())
	if s.seg > 0 {
		fmt.Printf("processor time below: the %d lives of the driver (the earlier ones as last journaled, every %s)\n", s.seg+1, cpuJournalEvery)
	}
	for _, l := range s.cpuReport(selfCPU(), s.wuAll) {
		fmt.Println(l)
	}
	fmt.Printf("server memory and descriptors (%d samples; the driver's life, the time since its start):\n", len(s.samples))
	step := max(1, len(s.samples)/12)
	for i := 0; i < len(s.samples); i += step {
		x := s.samples[i]
		fmt.Printf("  %d %7s  VmRSS %6.1f MiB  fds %4d\n", x.seg+1, x.at.Round(time.Second), mib(x.rss), x.fds)
	}
}
