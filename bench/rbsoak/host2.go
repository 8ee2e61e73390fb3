package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// The second host (fault kind "host2", -mariadb only): host B is set up as
// docs/several-hosts.md says a second host of the project is (and as
// TestTwoHosts in internal/engine does): its own server root beside the
// first, with the same rboinc.json (the same state in MariaDB, the same
// BOINC project, named by its absolute path), the shared directories (the
// pool, results, the DAV area, bin, etc: on a network file system there,
// links to the first root's here) and its own spool and lock files. It runs
// what a second host runs: `serve` on a port of its own (its stand-in
// waits as a standby while host A's plays the project), its creator, its
// notifier and, with the native assimilator, its own assimilator daemon
// beside the one BOINC's bin/start runs on the first host. Its processes
// run under a host name of their own (a UTS namespace), so that their
// pid_<host>/ files in BOINC's project are host B's, as on two machines.
// The clients pick one of the two hosts' URLs for each command, as behind
// a load balancer.

// host2Name is host B's host name (pid_<host>/ in BOINC's project).
const host2Name = "rbsoak-hostb"

// host2 is the second host's processes.
type host2 struct {
	root  string
	url   string
	procs []*proc // serve first
}

// host2Skip says why the host2 fault cannot run here, "" when it can.
func host2Skip(mariadb bool) string {
	if !mariadb {
		return "the state is on SQLite: a second host needs the state in MariaDB (docs/several-hosts.md: SQLite's locking over a network file system cannot be trusted; run with -mariadb)"
	}
	if out, err := exec.Command("unshare", "--uts", "true").CombinedOutput(); err != nil {
		return fmt.Sprintf("a host name of host B's own needs a UTS namespace (unshare --uts: %v: %s; run as root)", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// setupHost2 makes host B's root beside the first and starts its
// processes (after the first host's are up).
func (s *soak) setupHost2(ctx context.Context) error {
	rootB := filepath.Join(s.mnt, "hostb") // not a prefix of s.root's name, nor s.root of it: rootProcs tells them apart
	if err := os.MkdirAll(rootB, 0o750); err != nil {
		return err
	}
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return err
	}
	for _, ent := range ents {
		name := ent.Name()
		switch {
		case name == engine.ConfigFile:
			data, err := os.ReadFile(filepath.Join(s.root, name))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(rootB, name), data, 0o600); err != nil {
				return err
			}
		case name == "spool" || name == "boinc" || filepath.Ext(name) == ".lock" || strings.HasPrefix(name, "state.db"):
			// Local to each host; BOINC's project is named by its path.
		default:
			if err := os.Symlink(filepath.Join(s.root, name), filepath.Join(rootB, name)); err != nil && !os.IsExist(err) {
				return err
			}
		}
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	h := &host2{root: rootB, url: "http://" + addr + "/rboinc_cgi"}
	srv := filepath.Join(s.o.bin, "rboinc-server")
	logs := filepath.Join(s.o.work, "logs")
	// unshare execs sh, which sets the host name and execs the program:
	// the pid is the program's.
	onB := func(name, log string, args ...string) *proc {
		return &proc{name: name, log: filepath.Join(logs, log),
			args: append([]string{"unshare", "--uts", "sh", "-c", "hostname " + host2Name + " && exec \"$@\"", "sh", srv}, args...)}
	}
	h.procs = []*proc{
		onB("host B's server", "hostb-server.log", "serve", "--root", rootB, "--listen", addr),
		onB("host B's creator", "hostb-creator.log", "creator", "--root", rootB, "-d", "2"),
		onB("host B's notifier", "hostb-notifier.log", "notifier", "--root", rootB, "-d", "2"),
	}
	if s.o.assimilator == "native" {
		h.procs = append(h.procs, onB("host B's assimilator", "hostb-assimilator.log", "assimilator", "--root", rootB, "-d", "2", "--sleep_interval", "0.2"))
	}
	s.hostB = h
	if err := s.startHost2(ctx); err != nil {
		return fmt.Errorf("host B: %w", err)
	}
	fmt.Printf("host B: %s, root %s\n", h.url, rootB)
	return nil
}

// startHost2 starts host B's processes that do not run, and waits for its
// server to answer.
func (s *soak) startHost2(ctx context.Context) error {
	for _, p := range s.hostB.procs {
		if p.pid() == 0 {
			if err := p.start(); err != nil {
				return err
			}
		}
	}
	return waitAddr(ctx, s.hostB.url, 30*time.Second)
}

// stopHost2 stops host B's processes (at the end of the run).
func (s *soak) stopHost2() {
	if s.hostB == nil {
		return
	}
	for _, p := range s.hostB.procs {
		p.stop()
	}
}

// apiURL is the URL a client's command goes to: either host's at random
// when there are two, as behind a load balancer.
func (s *soak) apiURL() string {
	if s.hostB != nil && s.intn(2) == 1 {
		return s.hostB.url
	}
	return s.url
}

// killHost2 is one host2 fault: in turn, host B dies (every process of it
// killed with SIGKILL) and comes back a moment later, or host A's server,
// creator and notifier die while host B serves (and its stand-in takes
// BOINC's project over), and come back.
func (s *soak) killHost2(ctx context.Context) (bool, error) {
	s.mu.Lock()
	n := s.faults["host2"]
	s.mu.Unlock()
	var ps []*proc
	if n%2 == 0 {
		ps = s.hostB.procs
	} else {
		ps = []*proc{s.server, s.creator, s.notifier}
	}
	// A delivery the killed host's notifier or server sent may come
	// again: one kill of the sender (that host's one holding its notifier
	// lock), journaled like the others.
	sent := time.Now()
	for _, p := range ps {
		p.kill9()
	}
	s.noteSenderKill(senderKill{kind: "host2", at: time.Now(), sent: sent, sender: true})
	// The other host serves alone for a while.
	select {
	case <-ctx.Done():
	case <-time.After(s.jitter(2 * time.Second)):
	}
	if n%2 == 0 {
		return true, s.startHost2(ctx)
	}
	for _, p := range ps {
		if err := p.start(); err != nil {
			return true, err
		}
	}
	return true, s.waitServer(ctx, 30*time.Second)
}

// waitAddr waits until the server at url answers.
func waitAddr(ctx context.Context, url string, limit time.Duration) error {
	hostport := strings.TrimPrefix(strings.TrimSuffix(url, "/rboinc_cgi"), "http://")
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", hostport, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the server at %s did not answer within %s", url, limit)
}
