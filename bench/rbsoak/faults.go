package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// allFaults are the kinds of fault the soak injects.
var allFaults = []string{"server", "creator", "notifier", "assimilator", "client", "master", "gahp", "mariadb", "diskfull", "host2"}

// enabledFaults are the kinds asked for and possible here.
func (s *soak) enabledFaults() []string {
	var ks []string
	for _, k := range allFaults {
		if s.want(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

func (s *soak) faultsEnough() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.enabledFaults() {
		if s.faults[k] < s.o.minFaults {
			return false
		}
	}
	return true
}

// faultLoop injects a fault at random moments until ctx ends: mostly the
// kind done least so far, sometimes any.
func (s *soak) faultLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			s.extra.Wait()
			return
		case <-time.After(s.jitter(s.o.faultEvery)):
		}
		ks := s.enabledFaults()
		if len(ks) == 0 {
			continue
		}
		k := ks[s.intn(len(ks))]
		if s.intn(10) < 7 {
			s.mu.Lock()
			for _, c := range ks {
				if s.faults[c] < s.faults[k] {
					k = c
				}
			}
			s.mu.Unlock()
		}
		ok, err := s.inject(ctx, k)
		if err != nil && ctx.Err() != nil {
			continue // the faults were stopped while this one started (a client's start cancelled): no fault
		}
		if err != nil {
			s.problem("fault %s: %v", k, err)
			continue
		}
		if ok {
			s.bookFault(k)
		}
	}
}

// inject does one fault of kind k and undoes it (restarts what it
// killed, as bin/start or cron would). ok is false when there was nothing
// to do it to at that moment.
func (s *soak) inject(ctx context.Context, k string) (ok bool, err error) {
	switch k {
	case "server", "creator", "notifier":
		p := map[string]*proc{"server": s.server, "creator": s.creator, "notifier": s.notifier}[k]
		if k == "creator" {
			p.kill9()
		} else {
			s.killSender(p)
		}
		s.killDuringFault(k)
		time.Sleep(s.jitter(400 * time.Millisecond))
		if err := p.start(); err != nil {
			return true, err
		}
		if k == "server" {
			return true, s.waitServer(ctx, 30*time.Second)
		}
		return true, nil
	case "assimilator":
		if s.o.assimilator == "hook" {
			return s.killHook(ctx), nil
		}
		// The stand-in runs it as bin/start does, and starts it again.
		pids := s.rootProcs(" assimilator ")
		if len(pids) == 0 {
			return false, nil
		}
		err := syscall.Kill(pids[s.intn(len(pids))], syscall.SIGKILL)
		s.killDuringFault(k)
		if errors.Is(err, syscall.ESRCH) {
			return false, nil // it exited between the look and the kill (the stand-in starts it again)
		}
		return err == nil, err
	case "client":
		return s.killClient(ctx)
	case "master":
		return s.killMaster(), nil
	case "gahp":
		return s.killGAHP(), nil
	case "mariadb":
		return true, s.killMariaDB(ctx)
	case "diskfull":
		return true, s.fillDisk(ctx)
	case "host2":
		return s.killHost2(ctx)
	}
	return false, fmt.Errorf("unknown fault %q", k)
}

// killClient starts a submission with a WebDAV upload and kills it with
// SIGKILL while it transfers; the submission is then retried as a user
// would and must make every chain once.
func (s *soak) killClient(ctx context.Context) (bool, error) {
	s.mu.Lock()
	n := s.clientN
	s.clientN++
	s.mu.Unlock()
	u := s.users[n%len(s.users)]
	g := s.killedGroup(n, u)
	// On disk before the client starts: after a kill of the whole run
	// the group is submitted again and finished (resumeGroups).
	s.j.addSync(rec{T: "submit", User: u.name, Group: g.name, Killed: true})
	cmd, err := s.submitKilled(ctx, g)
	if err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := false
	select {
	case <-done:
	case <-time.After(time.Duration(10+s.intn(150)) * time.Millisecond):
		cmd.Process.Kill()
		<-done
		killed = true
	}
	s.killDuringFault("client")
	s.cpu.client(cmd)
	if !killed {
		s.bookRetry("client-early")
	}
	s.extra.Add(1)
	go func() { defer s.extra.Done(); s.submitAndFinish(g) }()
	return killed, nil
}

// killedArgs are the submission's arguments of a fault's group g.
func (s *soak) killedArgs(g *group) []string {
	return []string{"-app_name", "langevin", "-group", g.name, "-jobs", g.jobs,
		"-vel_file", s.inputFile("input.vel", coords), "-num_steps", fmt.Sprint(g.steps), "-quiet"}
}

// killedGroup is the group of the client fault's nth submission, as user u.
func (s *soak) killedGroup(n int, u *user) *group {
	return &group{user: u, name: fmt.Sprintf("k%05d", n), retrieved: map[string]*fileSeen{}, killed: true, steps: s.o.steps,
		chains: []*chain{{name: "c1", kind: kindBig, steps: s.o.steps}, {name: "c0", kind: kindPlain, steps: s.o.steps}}}
}

// submitKilled starts the submission of a fault's group g (killed in
// the middle).
func (s *soak) submitKilled(ctx context.Context, g *group) (*exec.Cmd, error) {
	if err := s.writeJobs(g); err != nil {
		return nil, err
	}
	args := s.killedArgs(g)
	cmd := exec.CommandContext(ctx, filepath.Join(s.o.bin, "rboinc-submit"), args...)
	cmd.Env = append(os.Environ(), "RBOINC_URL="+s.apiURL(), "RBOINC_TOKEN="+g.user.token, "RBOINC_HASH_CACHE=off")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// submitAndFinish: the user runs the killed submission of g again, then
// the group goes on as any.
func (s *soak) submitAndFinish(g *group) {
	if !g.submitted {
		if _, ok := s.retry(s.runCtx, g.user, "submit", "rboinc-submit", s.killedArgs(g)...); !ok {
			return
		}
		s.j.add(rec{T: "submitted", User: g.user.name, Group: g.name})
	}
	s.mu.Lock()
	s.groups = append(s.groups, g)
	s.mu.Unlock()
	s.finish(s.runCtx, g)
}

// killMariaDB kills MariaDB with SIGKILL and starts it again on the same
// data a moment later.
func (s *soak) killMariaDB(ctx context.Context) error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	b, err := os.ReadFile(filepath.Join(s.dbDir, "mysqld.pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	s.killDuringFault("mariadb")
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(s.jitter(1500 * time.Millisecond))
	db, err := mariadbtest.Start(context.WithoutCancel(ctx), s.dbDir, mariadbtest.BufferPool(s.o.dbPool))
	if err != nil {
		return fmt.Errorf("restarting MariaDB: %w", err)
	}
	s.db = db
	return nil
}

// fillDisk fills the server root's file system for a few seconds.
func (s *soak) fillDisk(ctx context.Context) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.mnt, &st); err != nil {
		return err
	}
	free := int64(st.Bavail) * st.Bsize
	p := filepath.Join(s.mnt, "filler")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer os.Remove(p)
	defer f.Close()
	// Most of it at once, then the rest block by block until the file
	// system says it is full.
	// (fallocate refuses a length of 0: with less than 1 MiB free the
	// blocks alone fill it.)
	if n := free - 1<<20; n > 0 {
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, n); err != nil && !errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("filling %s: %w", s.mnt, err)
		}
	}
	block := make([]byte, 4096)
	f.Seek(0, io.SeekEnd)
	for {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	s.killDuringFault("diskfull")
	select {
	case <-ctx.Done():
	case <-time.After(s.jitter(3 * time.Second)):
	}
	return nil
}

// killHook kills a running rboinc-hook (BOINC's script_assimilator runs
// one per work unit, for a few milliseconds) with SIGKILL: it looks for
// one for up to five seconds; false when none ran then. The stand-in's
// script_assimilator, as BOINC's, runs the work unit's hook again later.
func (s *soak) killHook(ctx context.Context) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
			if err != nil || filepath.Base(exe) != "rboinc-hook" || !(strings.HasPrefix(exe, s.root+"/") || strings.HasPrefix(exe, s.o.bin+"/")) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
