package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// masters are the master programs of the soak: examples/adaptive-master
// (package workflow/master), one tag after another, each run until its
// -target work units came back. The "master" fault kills the running one
// with SIGKILL; it is started again on the same directory, as its user
// would, and must go on where it was: every work unit made once, every
// result taken into account once.
type masters struct {
	mu      sync.Mutex
	cmd     *exec.Cmd // the running master, nil between runs
	killed  bool      // the running one was killed by the fault
	started int       // tags started
}

const (
	masterTarget   = 16 // work units of a tag
	masterInflight = 6  // kept running at once
)

// masterBinary is the master program the soak runs, "" when -bin has none.
func (s *soak) masterBinary() string {
	p := filepath.Join(s.o.bin, "adaptive-master")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// masterLoop runs masters, one tag after another, until actors ends; the
// last one runs to its end within the run's time.
func (s *soak) masterLoop(actors context.Context) {
	u := s.users[len(s.users)-1]
	n, again := 1, ""
	if l := s.led; l != nil && l.masterN > 0 {
		// The tag a kill of the whole run cut short: its master is
		// started again on its directory (as after the master fault), or,
		// done, checked.
		n, again = l.masterN, l.masterPhase
		if again == "checked" {
			n, again = n+1, ""
		}
	}
	for ; actors.Err() == nil; n++ {
		g := &group{user: u, name: fmt.Sprintf("m%03d", n), retrieved: map[string]*fileSeen{}, steps: 1}
		for i := range masterTarget {
			g.chains = append(g.chains, &chain{name: fmt.Sprintf("w%05d", i), kind: kindPlain, steps: 1})
		}
		var out string
		ok := true
		switch again {
		case "ran":
			out = s.led.masterOut
			// Checked and purged before the kill, its "checked" not
			// journaled: gone from the server, nothing to check again
			// (a problem its check found is journaled).
			if code, o := s.client(s.runCtx, u, "rboinc-retrieve", "-status", "-group", g.name, "-json"); code != 0 && strings.Contains(o, "no group "+g.name) {
				s.j.addSync(rec{T: "master", N: n, Kind: "checked"})
				again = ""
				continue
			}
		case "":
			s.masters.mu.Lock()
			s.masters.started++
			s.masters.mu.Unlock()
			s.j.addSync(rec{T: "master", N: n, Kind: "begin"})
			fallthrough
		default:
			if out, ok = s.runMaster(s.runCtx, g); !ok {
				return
			}
			s.j.addSync(rec{T: "master", N: n, Kind: "ran", Out: out[max(0, len(out)-4000):]})
		}
		again = ""
		s.checkMaster(s.runCtx, g, out)
		s.j.addSync(rec{T: "master", N: n, Kind: "checked"})
	}
}

var masterDone = regexp.MustCompile(`(?m)^done: (\d+) work units came back`)

// runMaster runs the master of tag g.name until it says it is done,
// starting it again after a kill or a failure (the server or the
// database away); its output of the last run.
func (s *soak) runMaster(ctx context.Context, g *group) (string, bool) {
	dir := filepath.Join(s.o.work, "masters", g.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.problem("master %s: %v", g.name, err)
		return "", false
	}
	args := []string{"-tag", g.name, "-dir", dir, "-inflight", fmt.Sprint(masterInflight), "-target", fmt.Sprint(masterTarget),
		"-coor", s.inputFile("input.coor", coords), "-vel", s.inputFile("input.vel", coords)}
	var last string
	for attempt := 0; attempt < 600 && ctx.Err() == nil; attempt++ {
		var out bytes.Buffer
		cmd := exec.Command(s.masterBinary(), args...)
		cmd.Env = append(os.Environ(), "RBOINC_URL="+s.apiURL(), "RBOINC_TOKEN="+g.user.token, "RBOINC_HASH_CACHE=off")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			s.problem("starting the master of %s: %v", g.name, err)
			return "", false
		}
		s.masters.mu.Lock()
		s.masters.cmd, s.masters.killed = cmd, false
		s.masters.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
		}
		s.cpu.client(cmd)
		s.masters.mu.Lock()
		s.masters.cmd = nil
		killed := s.masters.killed
		s.masters.mu.Unlock()
		last = out.String()
		if ctx.Err() != nil {
			return last, false
		}
		if err == nil {
			return last, true
		}
		if !killed {
			// The server or MariaDB away: the user starts it again.
			s.retried("master", time.Second)
		}
	}
	s.problem("the master of %s never finished: %s", g.name, lastLines(last, 3))
	return last, false
}

// killMaster kills the running master with SIGKILL; false when none runs.
func (s *soak) killMaster() bool {
	s.masters.mu.Lock()
	defer s.masters.mu.Unlock()
	if s.masters.cmd == nil || s.masters.cmd.Process == nil {
		return false
	}
	s.masters.killed = true
	return s.masters.cmd.Process.Signal(syscall.SIGKILL) == nil
}

// checkMaster checks a finished master's tag: it counted every work unit
// back once, each made once on the server and in BOINC, done, with its
// result files on the master's disk; then the tag is purged.
func (s *soak) checkMaster(ctx context.Context, g *group, out string) {
	id := g.user.name + "/" + g.name
	m := masterDone.FindStringSubmatch(out)
	if m == nil || m[1] != fmt.Sprint(masterTarget) {
		s.problem("master %s: ended without %d work units back: %s", id, masterTarget, lastLines(out, 3))
	}
	s.checkOneStepJobs(ctx, g, "master", "work units", "made by the master", true, func(id string, c *chain) {
		files, _ := os.ReadDir(filepath.Join(s.o.work, "masters", g.name, "results", g.name, c.name))
		if len(files) != 3 {
			var names []string
			for _, f := range files {
				names = append(names, f.Name())
			}
			s.problem("master %s/%s: %d result files on the master's disk, want 3: %v", id, c.name, len(files), names)
		}
	})
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], " | ")
}

var errNoMaster = errors.New("no adaptive-master in -bin (bench/soak.sh builds it)")
