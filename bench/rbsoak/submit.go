package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// chain kinds: what the stand-in does with a chain's steps, and so how it
// must end.
const (
	kindPlain = "plain" // computes; ends done
	kindBad   = "bad"   // every run fails; ends failed
	kindSlow  = "slow"  // every run sleeps first (a late result); ends done
	kindBig   = "big"   // a coordinate file over 1 MiB, uploaded by WebDAV; ends done
)

// control actions applied to chains while they run.
const (
	ctlStop     = "stop"
	ctlAbort    = "abort"
	ctlResume   = "stop+resume"
	ctlExtend   = "extend"
	ctlPriority = "priority"
)

// chain is one submitted chain and what it must end as.
type chain struct {
	name    string
	kind    string
	steps   int
	control string
	// observed right after an abort answered: the state the chain must
	// keep (aborted, or done when it finished first); "" otherwise.
	mustStay string
	final    string // the state the end check found
	// controlDone: its control was applied (journaled); extendBefore:
	// an extend begun before a kill of the whole run, the chain's steps
	// before it (0: none).
	controlDone  bool
	extendBefore int
}

// group is one submission: a group of one user's chains.
type group struct {
	user   *user
	name   string
	chains []*chain
	jobs   string // the -jobs file
	killed bool   // a client was killed while submitting it
	steps  int    // steps of its chains

	mu        sync.Mutex // one retrieval at a time
	retrieved map[string]*fileSeen
	finished  bool
	submitted bool // accepted before a kill of the whole run (journaled)
	purged    bool
}

// fileSeen is one result file as the retrievers saw it.
type fileSeen struct {
	times int
	acked bool // a run that retrieved it exited 0 (acknowledged)
}

// plan shares the chains out among the users, in batches.
func (s *soak) plan() map[string][]*group {
	out := map[string][]*group{}
	n := 0
	for b := 0; n < s.o.chains; b++ {
		u := s.users[b%len(s.users)]
		g := &group{user: u, name: fmt.Sprintf("b%05d", b), retrieved: map[string]*fileSeen{}, steps: s.o.steps}
		if s.o.oneStep > 1 && b%s.o.oneStep != s.o.oneStep-1 {
			g.steps = 1 // -one-step N: each Nth group of -steps, the others of one
		}
		for i := 0; i < s.o.batch && n < s.o.chains; i++ {
			c := &chain{name: fmt.Sprintf("c%d", i), kind: kindPlain, steps: g.steps}
			switch {
			case i%50 == 7:
				c.kind = kindBad
			case i%25 == 5:
				c.kind = kindSlow
			case i == 1 && b%4 == 0:
				c.kind = kindBig
			}
			if c.kind == kindPlain {
				switch i % 40 {
				case 11:
					c.control = ctlStop
				case 13:
					c.control = ctlAbort
				case 17:
					c.control = ctlResume
				case 19:
					c.control = ctlExtend
				case 23:
					c.control = ctlPriority
				}
			}
			g.chains = append(g.chains, c)
			n++
		}
		out[u.name] = append(out[u.name], g)
	}
	return out
}

// inputFiles writes the shared inputs once: the same coordinates and
// configurations for most chains (known inputs, sent once and found in
// the pool afterwards).
func (s *soak) inputFile(name, content string) string {
	p := filepath.Join(s.inputs, name)
	if _, err := os.Stat(p); err != nil {
		os.WriteFile(p+".tmp", []byte(content), 0o644)
		os.Rename(p+".tmp", p)
	}
	return p
}

const coords = "0.1 0.2 0.3\n1.0 -1.0 0.5\n-0.4 0.9 0.0\n0.7 0.7 -0.7\n"

func (s *soak) writeJobs(g *group) error {
	coor := s.inputFile("input.coor", coords)
	plain := s.inputFile("plain.conf", "steps 5\n")
	bad := s.inputFile("bad.conf", "steps 5\nfail 1\n")
	slow := s.inputFile("slow.conf", "steps 5\nsleep 1\n")
	var b strings.Builder
	for _, c := range g.chains {
		switch c.kind {
		case kindPlain:
			fmt.Fprintf(&b, "%s -coor_file %s -conf_file %s\n", c.name, coor, plain)
		case kindBad:
			fmt.Fprintf(&b, "%s -coor_file %s -conf_file %s\n", c.name, coor, bad)
		case kindSlow:
			fmt.Fprintf(&b, "%s -coor_file %s -conf_file %s\n", c.name, coor, slow)
		case kindBig:
			// Unique content, over the inline limit: a WebDAV upload
			// (velocities as many as the coordinates).
			base := filepath.Join(s.inputs, g.user.name+"-"+g.name)
			var cb, vb strings.Builder
			fmt.Fprintf(&cb, "%d.5 0.5 0.5\n", len(g.name))
			vb.WriteString("0 0 0\n")
			for cb.Len() < 1<<20+4096 {
				cb.WriteString("0.25 0.5 0.75\n")
				vb.WriteString("0 0 0\n")
			}
			if err := os.WriteFile(base+".coor", []byte(cb.String()), 0o644); err != nil {
				return err
			}
			if err := os.WriteFile(base+".vel", []byte(vb.String()), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s -coor_file %s.coor -vel_file %s.vel -conf_file %s\n", c.name, base, base, s.inputFile("big.conf", "steps 1\n"))
		}
	}
	g.jobs = filepath.Join(s.inputs, g.user.name+"-"+g.name+".jobs")
	return os.WriteFile(g.jobs, []byte(b.String()), 0o644)
}

// client runs one of the clients as user u; its exit code and output.
func (s *soak) client(ctx context.Context, u *user, name string, args ...string) (int, string) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.o.bin, name), args...)
	cmd.Env = append(os.Environ(), "RBOINC_URL="+s.apiURL(), "RBOINC_TOKEN="+u.token, "RBOINC_HASH_CACHE=off")
	out, err := cmd.CombinedOutput()
	s.cpu.client(cmd)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, string(out)
}

// retry runs a client until it succeeds: every failure during a fault
// (server down, database down, disk full) must be one a retry gets past.
// A usage error (2) or an authentication failure (5) is a problem at once.
func (s *soak) retry(ctx context.Context, u *user, what, name string, args ...string) (string, bool) {
	var last string
	for attempt := 0; attempt < 600; attempt++ {
		code, out := s.client(ctx, u, name, args...)
		if code == 0 {
			return out, true
		}
		if ctx.Err() != nil {
			return out, false
		}
		last = fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(out))
		if code == 2 || code == 5 {
			break
		}
		s.retried(what, 300*time.Millisecond)
	}
	s.problem("%s of %s/%s never succeeded: %s", what, u.name, args, last)
	return last, false
}

// submitLoop submits the user's groups, -in-flight at once, and
// hands each to a finisher that controls, checks and purges it.
func (s *soak) submitLoop(ctx context.Context, u *user, groups []*group) {
	sem := make(chan struct{}, max(1, s.o.inFlight))
	var wg sync.WaitGroup
	for _, g := range groups {
		if g.finished {
			// Checked before a kill of the whole run; its purge may not
			// have been sent.
			if !g.purged {
				s.purgeAgain(ctx, g, "purge")
			}
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		if err := s.writeJobs(g); err != nil {
			s.problem("writing the jobs of %s: %v", g.name, err)
			<-sem
			continue
		}
		args := []string{"-app_name", "langevin", "-group", g.name, "-jobs", g.jobs,
			"-vel_file", s.inputFile("input.vel", coords), "-num_steps", fmt.Sprint(g.steps), "-quiet"}
		// A submission whose answer the kill of the whole run lost (or
		// that it cut short) is sent again, as its user would.
		if !g.submitted {
			if _, ok := s.retry(ctx, u, "submit", "rboinc-submit", args...); !ok {
				<-sem
				continue
			}
			s.j.add(rec{T: "submitted", User: u.name, Group: g.name})
		}
		// Some submissions are repeated, as a script run twice does:
		// every chain is already there, nothing is made again.
		if !g.submitted && s.intn(10) == 0 {
			if out, ok := s.retry(ctx, u, "resubmit", "rboinc-submit", args...); ok && strings.Contains(out, "Submitted chain") {
				s.problem("resubmitting %s/%s made chains again: %s", u.name, g.name, firstLine(out))
			}
		}
		s.mu.Lock()
		s.groups = append(s.groups, g)
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s.finish(ctx, g)
		}()
	}
	wg.Wait()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
