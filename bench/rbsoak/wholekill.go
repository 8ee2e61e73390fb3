package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killDuringFault kills the whole run (killWhole) in the middle of a
// fault of kind k, when -kill-self-during k asks for it and
// -kill-self-after has passed. The fault is booked first: it was done
// (a process killed, a disk filled), and what it leaves the end checks
// allow for by the count of its kind.
func (s *soak) killDuringFault(k string) {
	if s.o.killDuring == k && s.o.killAfter > 0 && time.Since(s.started) >= s.o.killAfter {
		s.bookFault(k)
		fmt.Printf("rbsoak: -kill-self-during %s: in the middle of the fault\n", k)
		s.killWhole()
	}
}

// killWhole does what a stop of the machine does to the run: every
// process of it (the server and its daemons, the stand-in's, MariaDB, the
// clients, the masters and GAHPs, and the driver) stopped at once, then
// killed with SIGKILL. Nothing is flushed first: the journal holds what
// was written to it.
func (s *soak) killWhole() {
	fmt.Printf("rbsoak: -kill-self-after %s: kill -9 of every process of the run and of the driver\n", s.o.killAfter)
	self := os.Getpid()
	pids := s.runProcs(self)
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGSTOP)
	}
	// Those started between the look and the stop (a client, an app run).
	for _, p := range s.runProcs(self) {
		syscall.Kill(p, syscall.SIGSTOP)
		pids = append(pids, p)
	}
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
	syscall.Kill(self, syscall.SIGKILL)
	select {} // SIGKILL cannot be caught
}

// runProcs are the processes of the run: the driver's descendants, and
// those whose command line names the work directory or MariaDB's (daemons
// a killed server left, reparented).
func (s *soak) runProcs(self int) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	var named []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 {
				if f := strings.Fields(string(b[i+1:])); len(f) > 1 {
					parent[pid], _ = strconv.Atoi(f[1])
				}
			}
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		cl := string(b)
		if strings.Contains(cl, s.o.work+"/") || s.dbDir != "" && strings.Contains(cl, s.dbDir+"/") {
			named = append(named, pid)
		}
	}
	var out []int
	seen := map[int]bool{}
	for pid := range parent {
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if p == self {
				out, seen[pid] = append(out, pid), true
				break
			}
		}
	}
	for _, pid := range named {
		if !seen[pid] {
			out = append(out, pid)
		}
	}
	return out
}
