package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// terminal states: a chain in one of them runs no more steps.
var terminal = map[string]bool{"done": true, "failed": true, "stopped": true, "aborted": true}

// status of a group's chains, by name (retried through faults).
func (s *soak) status(ctx context.Context, g *group) (map[string]wire.ChainStatus, bool) {
	out, ok := s.retry(ctx, g.user, "status", "rboinc-retrieve", "-status", "-group", g.name, "-json")
	if !ok {
		return nil, false
	}
	var st wire.StatusResponse
	if err := json.Unmarshal([]byte(out[:strings.LastIndexByte(out, '}')+1]), &st); err != nil {
		s.problem("status of %s/%s: %v: %.200s", g.user.name, g.name, err, out)
		return nil, false
	}
	m := map[string]wire.ChainStatus{}
	for _, c := range st.Chains {
		m[c.Name] = c
	}
	return m, true
}

// finish applies the group's control actions, waits until every chain
// ends, retrieves what is left, checks the chains against what they must
// be, and purges the group.
func (s *soak) finish(ctx context.Context, g *group) {
	time.Sleep(s.jitter(time.Second))
	for _, c := range g.chains {
		if c.control == "" || c.controlDone || ctx.Err() != nil {
			continue
		}
		u, gn := g.user, g.name
		ctl := func(args ...string) bool {
			_, ok := s.retry(ctx, u, c.control, "rboinc-retrieve", append(args, "-group", gn, "-name", c.name, "-yes")...)
			return ok
		}
		switch c.control {
		case ctlStop:
			ctl("-stop")
		case ctlAbort:
			ctl("-abort")
		case ctlResume:
			// Resumed, or refused because its last step, in BOINC when
			// the stop came, finished first and ended it done: done
			// either way.
			if ctl("-stop") {
				time.Sleep(s.jitter(500 * time.Millisecond))
				s.retry(ctx, u, c.control, "rboinc-retrieve", "-resume", "-group", gn, "-name", c.name, "-yes")
			}
		case ctlExtend:
			if s.extend(ctx, g, c) {
				c.steps++
			}
		case ctlPriority:
			ctl("-priority", "5")
		}
		if c.control == ctlAbort {
			// What the chain is right after the answer: aborted must
			// stay so; one that finished first stays done.
			if st, ok := s.status(ctx, g); ok {
				c.mustStay = st[c.name].State
			}
		}
		if ctx.Err() == nil {
			// Done, and what it must end as: not applied again after a
			// kill of the whole run (an extend would add a step more).
			c.controlDone = true
			s.j.add(rec{T: "control", User: u.name, Group: gn, Chain: c.name, Stay: c.mustStay, Steps: c.steps})
		}
	}
	// Wait until no chain runs: the driver's own look, in-process (a
	// client process per look was most of the soak's processor time).
	for ctx.Err() == nil && !s.groupEnded(ctx, g) {
		time.Sleep(s.jitter(2 * time.Second))
	}
	if ctx.Err() != nil {
		return
	}
	s.retrieve(ctx, g)
	if ctx.Err() != nil {
		return // out of time mid-retrieval: the group is reported as unfinished, not as missing results
	}
	// The status the checks judge comes from the client, as a user sees
	// it.
	st, ok := s.status(ctx, g)
	if !ok {
		return
	}
	s.checkGroup(ctx, g, st)
	g.mu.Lock()
	g.finished = true
	g.mu.Unlock()
	// Checked, before it is purged: a kill of the whole run after the
	// purge must not check it again (its chains are gone).
	finals := map[string]string{}
	for _, c := range g.chains {
		finals[c.name] = c.final
	}
	steps := 0
	for _, cs := range st {
		steps += cs.StepsDone
	}
	s.j.addSync(rec{T: "finished", User: g.user.name, Group: g.name, Finals: finals, Chains: len(st), Steps: steps})
	s.purge(ctx, g)
}

// purge purges group g, checked.
func (s *soak) purge(ctx context.Context, g *group) {
	if _, ok := s.retry(ctx, g.user, "purge", "rboinc-retrieve", "-purge", "-group", g.name, "-yes"); ok {
		g.purged = true
		s.j.add(rec{T: "purged", User: g.user.name, Group: g.name})
	}
}

// purgeAgain purges group g, checked before a kill of the whole run that
// may have come after its purge and before the journal said so: then the
// server knows the group no more ("no group"), which is the purge done.
// (Sent again through retry, that answer was tried for minutes and failed
// the run: seen in a run killed four times.)
func (s *soak) purgeAgain(ctx context.Context, g *group, what string) bool {
	var last string
	for attempt := 0; attempt < 600 && ctx.Err() == nil; attempt++ {
		code, out := s.client(ctx, g.user, "rboinc-retrieve", "-purge", "-group", g.name, "-yes")
		if code == 0 || strings.Contains(out, "no group "+g.name) {
			g.purged = true
			s.j.add(rec{T: "purged", User: g.user.name, Group: g.name})
			return true
		}
		last = fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(out))
		if code == 2 || code == 5 {
			break
		}
		s.retried(what, 300*time.Millisecond)
	}
	if ctx.Err() == nil {
		s.problem("%s of %s/%s never succeeded: %s", what, g.user.name, g.name, last)
	}
	return false
}

// extend adds a step to chain c and tells whether the server did. A
// failed try is not simply repeated: its answer may have been lost after
// the server added the step (rboinc-retrieve says so), and a second
// -extend would add another; the chain's length on the server tells.
func (s *soak) extend(ctx context.Context, g *group, c *chain) bool {
	// The steps before: journaled (and on disk) before the first try, so
	// that after a kill of the whole run its effect is told the same way.
	before := c.extendBefore
	if before <= 0 {
		st, ok := s.status(ctx, g)
		if !ok {
			return false
		}
		before = st[c.name].NumSteps
		s.j.addSync(rec{T: "extend", User: g.user.name, Group: g.name, Chain: c.name, Before: before})
	}
	for attempt := 0; attempt < 600 && ctx.Err() == nil; attempt++ {
		st, ok := s.status(ctx, g)
		if !ok {
			return false
		}
		if n := st[c.name].NumSteps; n > before {
			return true // the last try added it; its answer was lost
		}
		code, out := s.client(ctx, g.user, "rboinc-retrieve", "-extend", "1", "-group", g.name, "-name", c.name, "-yes")
		switch {
		case code == 0:
			// Refused ("extended 0 chains; not: ...") counts nothing.
			return strings.Contains(out, "extended 1 chain")
		case code == 2 || code == 5:
			s.problem("extend of %s/%s/%s: exit %d: %s", g.user.name, g.name, c.name, code, strings.TrimSpace(out))
			return false
		}
		s.retried("extend", 300*time.Millisecond)
	}
	if ctx.Err() == nil {
		s.problem("extend of %s/%s/%s never succeeded", g.user.name, g.name, c.name)
	}
	return false
}

// checkGroup compares every chain with what its kind and control say,
// its results with what the retrievers got, and its work units in BOINC.
func (s *soak) checkGroup(ctx context.Context, g *group, st map[string]wire.ChainStatus) {
	id := g.user.name + "/" + g.name
	if len(st) != len(g.chains) {
		s.problem("%s: %d chains on the server, %d submitted", id, len(st), len(g.chains))
	}
	// The files retrieved, by chain and step: a long run's group holds
	// hundreds of thousands.
	type chainStep struct {
		chain string
		step  int
	}
	files := map[chainStep][]string{}
	g.mu.Lock()
	for name := range g.retrieved {
		k := chainStep{chainOf(name), stepOf(name)}
		files[k] = append(files[k], name)
	}
	g.mu.Unlock()
	steps := 0
	for _, c := range g.chains {
		cs, ok := st[c.name]
		if !ok {
			s.problem("%s/%s: accepted but not on the server", id, c.name)
			continue
		}
		got := cs.State
		c.final = got
		if want := wantState(c, cs); got != want {
			s.problem("%s/%s (%s, control %q): ended %s (%d of %d steps; %s), want %s", id, c.name, c.kind, c.control, got, cs.StepsDone, cs.NumSteps, cs.Reason, want)
		}
		if got == "done" && (cs.StepsDone != c.steps || cs.NumSteps != c.steps) {
			s.problem("%s/%s: done with %d of %d steps, want %d", id, c.name, cs.StepsDone, cs.NumSteps, c.steps)
		}
		steps += cs.StepsDone
		// Every finished step's three outputs retrieved exactly once.
		g.mu.Lock()
		for step := 0; step < cs.StepsDone; step++ {
			names := files[chainStep{c.name, step}]
			for _, name := range names {
				if f := g.retrieved[name]; f.times != 1 {
					s.problem("%s/%s: %s retrieved %d times after acknowledgement", id, c.name, name, f.times)
				}
			}
			if len(names) != 3 {
				s.problem("%s/%s step %d: %d result files retrieved, want 3", id, c.name, step, len(names))
			}
		}
		g.mu.Unlock()
	}
	s.checkWorkUnits(ctx, g, st)
	s.mu.Lock()
	s.stepsOK += steps
	s.chainsOK += len(st)
	s.mu.Unlock()
}

// wantState is the state chain c must end in, given how it ended (cs):
// its kind and control decide. A stopped chain ends done when its last
// step was in BOINC at the stop and completed (every step done), stopped
// when steps were left; an aborted one stays as the status right after
// the abort showed it (aborted, or done when it finished first); a
// stopped and resumed one ends done (resumed, or its last step ended it
// done before the resume).
func wantState(c *chain, cs wire.ChainStatus) string {
	switch {
	case c.kind == kindBad:
		return "failed"
	case c.control == ctlStop:
		if cs.StepsDone == c.steps && cs.NumSteps == c.steps {
			return "done"
		}
		return "stopped"
	case c.control == ctlAbort && c.mustStay != "":
		return c.mustStay
	case c.control == ctlAbort:
		// Its status after the abort was not read (the run ended): it
		// aborted, or finished first.
		if cs.State == "done" {
			return "done"
		}
		return "aborted"
	}
	return "done"
}

// chainOf and stepOf read a result file's chain and step from its name,
// <chain>-<USER>_<group>-<step>-<steps>-RND<n>_<index><alias>.
func chainOf(file string) string {
	c, _, _ := strings.Cut(file, "-")
	return c
}

func stepOf(file string) int {
	f := strings.Split(file, "-")
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return n
}

// retrieveLoop is the user's cron retriever: every few seconds, the
// results of every group not yet finished, each run into a new directory.
func (s *soak) retrieveLoop(ctx context.Context, u *user) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.jitter(s.o.retrieveGap)):
		}
		s.mu.Lock()
		var gs []*group
		for _, g := range s.groups {
			if g.user == u {
				gs = append(gs, g)
			}
		}
		s.mu.Unlock()
		for _, g := range gs {
			g.mu.Lock()
			done := g.finished
			g.mu.Unlock()
			if !done && ctx.Err() == nil {
				s.retrieveSome(ctx, g)
			}
		}
	}
}

// retrieve runs `rboinc-retrieve -into` once for the group, as cron
// would, into a directory of its own, and books every file it got: its
// MD5 against the server's list taken just before, and how often it came.
func (s *soak) retrieve(ctx context.Context, g *group) {
	s.retrieveRun(ctx, g, false)
}

// retrieveSome is the cron retriever's run: as retrieve, but no client
// runs when the server lists no result waiting (a run that would get
// nothing); it does run when the server does not answer (a fault), as
// cron would.
func (s *soak) retrieveSome(ctx context.Context, g *group) {
	s.retrieveRun(ctx, g, true)
}

func (s *soak) retrieveRun(ctx context.Context, g *group, some bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.finished {
		return
	}
	sums, listed := s.resultSums(ctx, g)
	if some && listed && len(sums) == 0 {
		return
	}
	// Named for its group: after a kill of the whole run, what it holds
	// is booked to the group (bookOrphans).
	dir, err := os.MkdirTemp(s.o.work, "retrieve-"+g.user.name+"-"+g.name+"-")
	if err != nil {
		s.problem("retrieval directory: %v", err)
		return
	}
	defer os.RemoveAll(dir)
	s.j.add(rec{T: "retrieve", Dir: dir, Sums: sums})
	code, out := s.client(ctx, g.user, "rboinc-retrieve", "-group", g.name, "-into", dir, "-quiet")
	stopped := ctx.Err() != nil
	if stopped {
		// Killed by the end of the retrievers (the run's end): what it
		// wrote came all the same, and may be acknowledged already (the
		// next retrieval then gets nothing), so it is booked, unacked.
		code = -1
	}
	if code != 0 && !stopped {
		s.bookRetry("retrieve")
		if code == 2 || code == 5 {
			s.problem("retrieve %s/%s: exit %d: %s", g.user.name, g.name, code, firstLine(out))
		}
	}
	s.bookDir(g, dir, code, sums)
}

// bookDir books the files a retrieval that exited code (-1: killed) wrote
// into dir, checks their MD5s against sums (the server's list taken before
// it), and journals them (on disk before dir goes: they are booked once).
// g.mu is held.
func (s *soak) bookDir(g *group, dir string, code int, sums map[string]string) {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue // the client's own files (partial downloads, its lock)
		}
		names = append(names, name)
		book(g.retrieved, name, code)
		if want, ok := sums[name]; ok {
			if got := fileMD5(filepath.Join(dir, name)); got != want {
				s.problem("%s/%s: %s has MD5 %s, the server listed %s", g.user.name, g.name, name, got, want)
			}
		}
	}
	s.j.addSync(rec{T: "retrieved", User: g.user.name, Group: g.name, Dir: dir, Code: code, Files: names})
}

// groupEnded tells whether no chain of group g runs, asking the server's
// API from the driver; false while the server does not answer.
func (s *soak) groupEnded(ctx context.Context, g *group) bool {
	req, _ := http.NewRequestWithContext(ctx, "GET", s.apiURL()+wire.PathStatus+"?group="+url.QueryEscape(g.name), nil)
	req.Header.Set("Authorization", "Bearer "+g.user.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st wire.StatusResponse
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&st) != nil || len(st.Chains) == 0 {
		return false
	}
	for _, c := range st.Chains {
		if !terminal[c.State] {
			return false
		}
	}
	return true
}

// resultSums lists the group's results waiting on the server: file name
// (as the retriever writes it) to MD5. Empty when the server is down.
func (s *soak) resultSums(ctx context.Context, g *group) (sums map[string]string, listed bool) {
	sums = map[string]string{}
	req, _ := http.NewRequestWithContext(ctx, "GET", s.apiURL()+wire.PathResults+"?group="+url.QueryEscape(g.name), nil)
	req.Header.Set("Authorization", "Bearer "+g.user.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sums, false
	}
	defer resp.Body.Close()
	var rr wire.ResultsResponse
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&rr) != nil {
		return sums, false
	}
	for _, f := range rr.Files {
		n := f.Name
		if len(f.Aliases) > 0 {
			n += f.Aliases[0]
		}
		sums[n] = f.MD5
	}
	return sums, true
}

func fileMD5(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	h := md5.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))
}
