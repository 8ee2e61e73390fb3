package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cpuBook is where the run's processor time went, by actor: the clients
// exactly (their rusage when they exit), the long-running processes (the
// server, its daemons, the stand-in's, MariaDB) by sampling /proc, so
// that a kill -9 loses at most one sampling interval of a process. It is
// what tells the soak's own overhead (clients, polling) from the work of
// the server and the stand-in.
type cpuBook struct {
	mu      sync.Mutex
	clients map[string]float64    // seconds, by client binary
	runs    map[string]int        // client runs, by binary
	live    map[procKey]*procSeen // long-running processes seen
}

// procKey names one process for its whole life: a pid is reused.
type procKey struct {
	pid   int
	start uint64 // clock ticks after boot
}

type procSeen struct {
	label string
	ticks uint64 // utime+stime, last seen
	// kids is cutime+cstime, last seen: the processor time of the
	// children it reaped (the stand-in's app runs, create_work, the hook),
	// processes too short for sampling. Counted for the driver's
	// long-running processes only (roles).
	kids      uint64
	kidsLabel string
}

func newCPUBook() *cpuBook {
	return &cpuBook{clients: map[string]float64{}, runs: map[string]int{}, live: map[procKey]*procSeen{}}
}

// client books a client run that ended.
func (b *cpuBook) client(cmd *exec.Cmd) {
	if cmd.ProcessState == nil {
		return
	}
	name := filepath.Base(cmd.Path)
	t := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	b.mu.Lock()
	b.clients[name] += t
	b.runs[name]++
	b.mu.Unlock()
}

// clockTick is USER_HZ, 100 on every Linux the soak runs on.
const clockTick = 100

// cpuJournalEvery is how often the processor time so far is journaled,
// for the report of a run resumed after a kill.
const cpuJournalEvery = 30 * time.Second

// cpuLoop samples the processor time of the soak's long-running
// processes every second until ctx ends, and journals it every
// cpuJournalEvery and at the end.
func (s *soak) cpuLoop(ctx context.Context) {
	last := time.Now()
	for {
		s.sampleCPU()
		if time.Since(last) >= cpuJournalEvery {
			s.j.add(s.cpuRec())
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			s.j.add(s.cpuRec())
			return
		case <-time.After(time.Second):
		}
	}
}

// sampleCPU reads the processor time of every process whose command line
// names the server root or MariaDB's directory, except the clients
// (booked exactly when they exit).
func (s *soak) sampleCPU() {
	if s.root == "" {
		return
	}
	roles := map[int]string{}
	for _, p := range []*proc{s.server, s.creator, s.notifier} {
		if p != nil {
			if pid := p.pid(); pid != 0 {
				roles[pid] = p.name + " (rboinc-server " + p.args[1] + ")"
			}
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		start, ticks, kids, ok := procTimes(pid)
		if !ok {
			continue
		}
		k := procKey{pid, start}
		s.cpu.mu.Lock()
		seen := s.cpu.live[k]
		s.cpu.mu.Unlock()
		if seen == nil {
			label := roles[pid]
			if label == "" {
				label = s.procLabel(pid)
			}
			if label == "" {
				continue
			}
			seen = &procSeen{label: label}
			if r := roles[pid]; r != "" {
				seen.kidsLabel = "reaped by the " + strings.SplitN(r, " ", 2)[0] + " (the stand-in's app runs, create_work, hooks)"
			}
			s.cpu.mu.Lock()
			s.cpu.live[k] = seen
			s.cpu.mu.Unlock()
		}
		s.cpu.mu.Lock()
		seen.ticks, seen.kids = ticks, kids
		s.cpu.mu.Unlock()
	}
}

// procLabel names a process of the soak by its command line ("" for one
// not of the soak, or a client).
func (s *soak) procLabel(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	cl := strings.Join(args, " ")
	switch {
	case s.dbDir != "" && strings.Contains(cl, s.dbDir):
		return "MariaDB"
	case !strings.Contains(cl, s.root):
		return ""
	}
	prog := filepath.Base(args[0])
	if prog == "rboinc-submit" || prog == "rboinc-retrieve" {
		return ""
	}
	if len(args) > 1 && isWord(args[1]) {
		return prog + " " + args[1] // a subcommand (rboinc-server serve, assimilator, ...)
	}
	return prog
}

// procTimes reads a process's start time, its utime+stime and the
// cutime+cstime of the children it reaped from /proc/PID/stat.
func procTimes(pid int) (start, ticks, kids uint64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	return parseStat(string(b))
}

// parseStat reads fields 22 (start time), 14 and 15 (utime, stime) and 16
// and 17 (cutime, cstime) of a /proc/PID/stat line (the command in
// parentheses may hold spaces and parentheses).
func parseStat(line string) (start, ticks, kids uint64, ok bool) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(line[i+1:])
	// f[0] is field 3 (state).
	if len(f) < 20 {
		return 0, 0, 0, false
	}
	n := func(k int) uint64 { v, _ := strconv.ParseUint(f[k], 10, 64); return v }
	return n(19), n(11) + n(12), n(13) + n(14), true
}

// cpuTotals is this life's processor time by actor (seconds), given the
// driver's own: the processes seen of each actor, the client runs of each
// client actor, and the time of the short processes each daemon reaped.
func (s *soak) cpuTotals(driver float64) (by map[string]float64, procs, runs map[string]int, kids map[string]float64) {
	s.cpu.mu.Lock()
	defer s.cpu.mu.Unlock()
	by, procs, runs, kids = map[string]float64{}, map[string]int{}, map[string]int{}, map[string]float64{}
	for _, p := range s.cpu.live {
		by[p.label] += float64(p.ticks) / clockTick
		procs[p.label]++
		if p.kidsLabel != "" {
			kids[p.kidsLabel] += float64(p.kids) / clockTick
		}
	}
	for k, v := range s.cpu.clients {
		label := k + " (clients)"
		by[label] += v
		runs[label] += s.cpu.runs[k]
	}
	by[driverLabel] = driver
	return by, procs, runs, kids
}

const driverLabel = "rbsoak (the driver)"

// cpuRec is the journal's record of this life's processor time so far.
func (s *soak) cpuRec() rec {
	by, _, runs, _ := s.cpuTotals(selfCPU())
	return rec{T: "cpu", CPU: by, Runs: runs}
}

// selfCPU is the driver's own processor time, in seconds.
func selfCPU() float64 {
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano()).Seconds()
}

// cpuReport is the processor time by actor, largest first, with the
// total per work unit made: of every life of the driver, each earlier
// one as its last record in the journal said (up to a cpuJournalEvery
// of it lost to the kill that ended it).
func (s *soak) cpuReport(driver float64, wus int64) []string {
	by, procs, nruns, kids := s.cpuTotals(driver)
	if s.led != nil {
		for _, r := range s.led.cpu {
			for k, v := range r.CPU {
				by[k] += v
			}
			for k, v := range r.Runs {
				nruns[k] += v
			}
		}
	}
	runs := map[string]string{}
	for k, n := range nruns {
		runs[k] = fmt.Sprintf("%d runs", n)
	}
	var labels []string
	total := 0.0
	for k, v := range by {
		labels = append(labels, k)
		total += v
	}
	sort.Slice(labels, func(i, j int) bool { return by[labels[i]] > by[labels[j]] })
	per := func(v float64) string {
		if wus <= 0 {
			return ""
		}
		return fmt.Sprintf(", %.1f ms per work unit", 1000*v/float64(wus))
	}
	out := []string{fmt.Sprintf("processor time by actor: %.0f s in all%s", total, per(total))}
	for _, k := range labels {
		n := runs[k]
		if n == "" {
			n = fmt.Sprintf("%d processes", procs[k])
		}
		out = append(out, fmt.Sprintf("  %-40s %7.1f s (%s%s)", k, by[k], n, per(by[k])))
	}
	// Not in the sum: a daemon the server started and reaped (a killed
	// native assimilator) is in both.
	var kl []string
	for k, v := range kids {
		if v > 0 {
			kl = append(kl, k)
		}
	}
	sort.Strings(kl)
	for _, k := range kl {
		out = append(out, fmt.Sprintf("  of the short processes: %s %.1f s%s (not in the sum: with the daemons it restarted)", k, kids[k], per(kids[k])))
	}
	return out
}

// isWord tells a subcommand from an argument: lower-case letters only.
func isWord(a string) bool {
	if a == "" {
		return false
	}
	for _, r := range a {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
