package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/gahp"
	"github.com/rboinc/rboinc/workflow/wire"
)

// The GAHP actor drives rboinc-gahp over its stdin and stdout as
// HTCondor's gridmanager does (synchronous mode, RESULTS polled): one
// batch after another, each submitted, queried until every job ended,
// every job's outputs fetched, the batch retired. A request that fails
// while the server or MariaDB is down is sent again, as the gridmanager
// does; a submission whose answer was lost is found on the server (the
// batch's name is taken then). It checks that every job was made once
// (on the server and in BOINC), ended done, and that every job's outputs
// came whole with one successful fetch.

const gahpJobs = 12 // jobs of a GAHP batch

// gahpSession is one running rboinc-gahp.
type gahpSession struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	next   int  // the next request id
	killed bool // by the "gahp" fault (under gahpSessions.mu)
}

// gahpSessions is the running GAHP session, which the "gahp" fault kills
// with SIGKILL; the batch then goes on through a new session, as
// HTCondor's gridmanager starts its GAHP again and sends its requests
// again.
type gahpSessions struct {
	mu  sync.Mutex
	cur *gahpSession // nil between batches
}

func (s *soak) setGAHP(gs *gahpSession) {
	s.gahps.mu.Lock()
	s.gahps.cur = gs
	s.gahps.mu.Unlock()
}

// killGAHP kills the running rboinc-gahp; false when none runs.
func (s *soak) killGAHP() bool {
	s.gahps.mu.Lock()
	defer s.gahps.mu.Unlock()
	gs := s.gahps.cur
	if gs == nil || gs.killed {
		return false
	}
	gs.killed = true
	return gs.cmd.Process.Signal(syscall.SIGKILL) == nil
}

// gahpRequest is (*gsp).request; when the fault killed the session, a new
// one is started in dir for u (*gsp becomes it) and the request sent
// again there.
func (s *soak) gahpRequest(ctx context.Context, gsp **gahpSession, dir string, u *user, words ...string) (string, error) {
	for {
		r, err := (*gsp).request(ctx, slices.Clone(words)...)
		if err == nil || ctx.Err() != nil {
			return r, err
		}
		s.gahps.mu.Lock()
		killed := (*gsp).killed
		s.gahps.mu.Unlock()
		if !killed {
			return r, err
		}
		(*gsp).quit(s)
		gs, err := s.startGAHP(ctx, dir, u)
		if err != nil {
			return "", fmt.Errorf("starting rboinc-gahp again after its kill: %w", err)
		}
		s.setGAHP(gs)
		*gsp = gs
		s.bookRetry("gahp-restart")
	}
}

// gahpLoop runs GAHP batches, one after another, until actors ends; the
// last one runs to its end within the run's time.
func (s *soak) gahpLoop(actors context.Context) {
	u := s.users[0]
	n := 1
	if l := s.led; l != nil && l.gahpN > 0 {
		// The batch a kill of the whole run cut short: run again (its
		// submission is found on the server), or, its retirement
		// journaled, retired again, as HTCondor's gridmanager sends its
		// retirement again through a new GAHP. (Purging its group
		// instead left the batch and its jobs' rows for good: 4 batches,
		// 48 jobs in the 1,000,000-work-unit run.)
		n = l.gahpN
		if l.gahpPhase == "done" {
			n++
		} else if l.gahpPhase == "retire" {
			if !s.gahpRetireAgain(s.runCtx, s.gahpGroup(u, n)) {
				return
			}
			s.gahpDone(n)
			n++
		}
	}
	for ; actors.Err() == nil; n++ {
		g := s.gahpGroup(u, n)
		s.j.addSync(rec{T: "gahp", N: n, Kind: "begin"})
		if !s.gahpBatch(s.runCtx, g) {
			return
		}
		s.gahpDone(n)
	}
}

// gahpBatch runs batch g through a GAHP session: submit, query until
// done, fetch every job, check, retire. false when the run ended first.
func (s *soak) gahpBatch(ctx context.Context, g *group) bool {
	dir := filepath.Join(s.o.work, "gahp", g.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.problem("GAHP %s: %v", g.name, err)
		return false
	}
	gs, err := s.startGAHP(ctx, dir, g.user)
	if err != nil {
		s.problem("GAHP %s: %v", g.name, err)
		return false
	}
	s.setGAHP(gs)
	defer func() { s.setGAHP(nil); gs.quit(s) }()
	id := g.user.name + "/" + g.name
	// Submit, once: a failed try whose batch is on the server all the same
	// (its answer lost with a killed server) is not sent again.
	line := []string{"BOINC_SUBMIT", "", g.name, "langevin", strconv.Itoa(len(g.chains))}
	for _, c := range g.chains {
		line = append(line, c.name, "0", "2", gahp.Escape(s.inputFile("input.coor", coords)), "input.coor", gahp.Escape(s.inputFile("input.vel", coords)), "input.vel")
	}
	submitted, last := false, ""
	for attempt := 0; attempt < 600 && ctx.Err() == nil && !submitted; attempt++ {
		r, err := s.gahpRequest(ctx, &gs, dir, g.user, line...)
		last = r
		switch {
		case err != nil:
			return s.gahpBroke(ctx, id, err)
		case r == "NULL":
			submitted = true
		case strings.Contains(r, "batch\\ named\\ "+g.name+"\\ ") && strings.Contains(r, "already"):
			// The last try made it and its answer was lost; or it is
			// still being undone (the GAHP killed in the middle of it, the
			// server drops what it began): then it is sent again.
			submitted = s.gahpBatchWhole(ctx, &gs, dir, g)
			if !submitted {
				s.gahpRetry("submit")
			}
		default:
			s.gahpRetry("submit")
		}
	}
	if !submitted {
		return s.gahpGaveUp(ctx, id, "submit", last)
	}
	// Query until every job ended.
	for ctx.Err() == nil {
		r, err := s.gahpRequest(ctx, &gs, dir, g.user, "BOINC_QUERY_BATCHES", "", "0", "1", g.name)
		if err != nil {
			return s.gahpBroke(ctx, id, err)
		}
		jobs, ok := parseQuery(r)
		if ok && len(jobs) != len(g.chains) {
			s.problem("GAHP %s: the query lists %d jobs, %d submitted: %.200s", id, len(jobs), len(g.chains), r)
			return false
		}
		if ok && allEnded(jobs) {
			break
		}
		if !ok {
			s.gahpRetry("query")
		}
		time.Sleep(s.jitter(2 * time.Second))
	}
	// Fetch every job's outputs: each one successful fetch.
	for _, c := range g.chains {
		jd := filepath.Join(dir, c.name)
		os.MkdirAll(jd, 0o755)
		fetched := false
		for attempt := 0; attempt < 600 && ctx.Err() == nil && !fetched; attempt++ {
			r, err := s.gahpRequest(ctx, &gs, dir, g.user, "BOINC_FETCH_OUTPUT", "", c.name, gahp.Escape(jd), "stderr.txt", "ALL", "0")
			last = r
			if err != nil {
				return s.gahpBroke(ctx, id, err)
			}
			if strings.HasPrefix(r, "NULL 0 ") {
				fetched = true
			} else {
				if attempt%100 == 0 {
					fmt.Printf("GAHP %s: fetch of %s failed (try %d): %.300s\n", id, c.name, attempt+1, r)
				}
				s.gahpRetry("fetch")
			}
		}
		if !fetched {
			return s.gahpGaveUp(ctx, id, "fetch of "+c.name, last)
		}
		for _, f := range []string{"output.coor", "output.vel", "progress.log"} {
			if fi, err := os.Stat(filepath.Join(jd, f)); err != nil || fi.Size() == 0 {
				s.problem("GAHP %s/%s: output %s missing or empty after the fetch", id, c.name, f)
			}
		}
	}
	if ctx.Err() != nil {
		return false
	}
	s.checkGAHP(ctx, g)
	s.j.addSync(rec{T: "gahp", N: gahpNumber(g.name), Kind: "retire"})
	s.killAt("gahp-retire")
	return s.gahpRetire(ctx, &gs, dir, g)
}

// gahpRetire retires batch g (its chains are purged, its records
// dropped), sent again until answered. false when the run ended first.
func (s *soak) gahpRetire(ctx context.Context, gsp **gahpSession, dir string, g *group) bool {
	id := g.user.name + "/" + g.name
	last := ""
	for attempt := 0; attempt < 600 && ctx.Err() == nil; attempt++ {
		r, err := s.gahpRequest(ctx, gsp, dir, g.user, "BOINC_RETIRE_BATCH", "", g.name)
		last = r
		if err != nil {
			return s.gahpBroke(ctx, id, err)
		}
		if r == "NULL" {
			return true
		}
		s.gahpRetry("retire")
	}
	return s.gahpGaveUp(ctx, id, "retire", last)
}

// gahpRetireAgain retires batch g, checked before a kill of the whole
// run that came after its retirement was journaled: through a new GAHP
// session, as HTCondor's gridmanager started again does. A retirement
// the server finished before the kill is answered as done (a retired
// batch's name is kept 30 days); one cut between the purge of its chains
// and the drop of its records is finished. false when the run ended
// first.
func (s *soak) gahpRetireAgain(ctx context.Context, g *group) bool {
	dir := filepath.Join(s.o.work, "gahp", g.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.problem("GAHP %s: %v", g.name, err)
		return false
	}
	gs, err := s.startGAHP(ctx, dir, g.user)
	if err != nil {
		return s.gahpBroke(ctx, g.user.name+"/"+g.name, err)
	}
	s.setGAHP(gs)
	defer func() { s.setGAHP(nil); gs.quit(s) }()
	return s.gahpRetire(ctx, &gs, dir, g)
}

// gahpGroup is GAHP batch n of user u.
func (s *soak) gahpGroup(u *user, n int) *group {
	g := &group{user: u, name: fmt.Sprintf("gahp%03d", n), retrieved: map[string]*fileSeen{}, steps: 1}
	for i := range gahpJobs {
		g.chains = append(g.chains, &chain{name: fmt.Sprintf("g%03dj%02d", n, i), kind: kindPlain, steps: 1})
	}
	return g
}

func gahpNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "gahp"))
	return n
}

// gahpDone counts batch n as run to its end and checked.
func (s *soak) gahpDone(n int) {
	s.mu.Lock()
	s.gahpBatches++
	s.mu.Unlock()
	s.j.add(rec{T: "gahp", N: n, Kind: "done"})
}

// gahpBatchWhole tells whether batch g is on the server with all its jobs,
// asked again for a few seconds (a submission being undone goes).
func (s *soak) gahpBatchWhole(ctx context.Context, gsp **gahpSession, dir string, g *group) bool {
	for range 3 {
		r, err := s.gahpRequest(ctx, gsp, dir, g.user, "BOINC_QUERY_BATCHES", "", "0", "1", g.name)
		if err != nil {
			return false
		}
		if jobs, ok := parseQuery(r); !ok || len(jobs) != len(g.chains) {
			return false
		}
		time.Sleep(time.Second)
	}
	return true
}

// checkGAHP checks a GAHP batch whose jobs were fetched: every job once
// on the server, done with its one step, made once in BOINC.
func (s *soak) checkGAHP(ctx context.Context, g *group) {
	s.checkOneStepJobs(ctx, g, "GAHP", "jobs", "submitted", false, nil)
}

// checkOneStepJobs checks a group of one-step jobs (the GAHP's, a
// master's): every job once on the server, done with its one step, made
// once in BOINC; each job's further checks in each (may be nil). The group
// is then purged when purge says so, and counted as finished.
func (s *soak) checkOneStepJobs(ctx context.Context, g *group, who, what, madeBy string, purge bool, each func(id string, c *chain)) {
	id := g.user.name + "/" + g.name
	st, ok := s.status(ctx, g)
	if !ok {
		return
	}
	if len(st) != len(g.chains) {
		s.problem("%s %s: %d %s on the server, %d %s", who, id, len(st), what, len(g.chains), madeBy)
	}
	steps := 0
	for _, c := range g.chains {
		cs, ok := st[c.name]
		switch {
		case !ok:
			s.problem("%s %s/%s: not on the server", who, id, c.name)
			continue
		case cs.State != "done" || cs.StepsDone != 1:
			s.problem("%s %s/%s: ended %s with %d steps, want done with 1", who, id, c.name, cs.State, cs.StepsDone)
		}
		c.final = cs.State
		steps += cs.StepsDone
		if each != nil {
			each(id, c)
		}
	}
	s.checkWorkUnits(ctx, g, st)
	if purge {
		s.retry(ctx, g.user, "purge", "rboinc-retrieve", "-purge", "-group", g.name, "-yes")
	}
	g.finished = true
	finals := map[string]string{}
	for _, c := range g.chains {
		finals[c.name] = c.final
	}
	s.mu.Lock()
	s.groups = append(s.groups, g)
	s.stepsOK += steps
	s.chainsOK += len(st)
	s.mu.Unlock()
	// For the end checks of a run resumed after a kill of the whole run
	// (its events).
	s.j.add(rec{T: "checked", User: g.user.name, Group: g.name, Finals: finals, Chains: len(st), Steps: steps})
}

// gahpRetry books a failed request that is sent again (the server or
// MariaDB away, as the gridmanager sees it).
func (s *soak) gahpRetry(what string) {
	s.retried("gahp-"+what, 300*time.Millisecond)
}

// gahpBroke is the end of a batch whose session broke: a problem unless
// the run ended.
func (s *soak) gahpBroke(ctx context.Context, id string, err error) bool {
	if ctx.Err() == nil {
		s.problem("GAHP %s: %v", id, err)
	}
	return false
}

// gahpGaveUp is the end of a batch whose request failed every time; last
// is its last answer, which says why.
func (s *soak) gahpGaveUp(ctx context.Context, id, what, last string) bool {
	if ctx.Err() == nil {
		s.problem("GAHP %s: %s never succeeded; the last answer: %.300s", id, what, last)
	}
	return false
}

// parseQuery reads BOINC_QUERY_BATCHES' answer for one batch, "NULL TIME
// N NAME STATE...", into job states by name; ok is false for a failure.
func parseQuery(r string) (map[string]string, bool) {
	w := strings.Fields(r)
	if len(w) < 3 || w[0] != "NULL" {
		return nil, false
	}
	n, err := strconv.Atoi(w[2])
	if err != nil || len(w) != 3+2*n {
		return nil, false
	}
	jobs := map[string]string{}
	for i := 0; i < n; i++ {
		jobs[w[3+2*i]] = w[4+2*i]
	}
	return jobs, true
}

// allEnded tells whether no job is still in progress.
func allEnded(jobs map[string]string) bool {
	for _, st := range jobs {
		if st == wire.JobInProgress {
			return false
		}
	}
	return true
}

// startGAHP starts rboinc-gahp in dir and selects the project as user u.
func (s *soak) startGAHP(ctx context.Context, dir string, u *user) (*gahpSession, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.o.bin, "rboinc-gahp"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RBOINC_HASH_CACHE=off")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(filepath.Join(s.o.work, "logs", "gahp.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting rboinc-gahp: %w", err)
	}
	gs := &gahpSession{cmd: cmd, in: in, out: bufio.NewReader(out), next: 1}
	banner, err := gs.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(banner, "$GahpVersion:") {
		gs.quit(s)
		return nil, fmt.Errorf("rboinc-gahp's banner: %q, %v", banner, err)
	}
	if r, err := gs.command("BOINC_SELECT_PROJECT", gahp.Escape(s.apiURL()), gahp.Escape(u.token)); err != nil || r != "S" {
		gs.quit(s)
		return nil, fmt.Errorf("BOINC_SELECT_PROJECT: %q, %v", r, err)
	}
	return gs, nil
}

// command sends one line and reads its one-line answer.
func (gs *gahpSession) command(words ...string) (string, error) {
	if _, err := io.WriteString(gs.in, strings.Join(words, " ")+"\n"); err != nil {
		return "", fmt.Errorf("writing to rboinc-gahp: %w", err)
	}
	l, err := gs.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading rboinc-gahp's answer to %s: %w", words[0], err)
	}
	return strings.TrimSuffix(l, "\n"), nil
}

// request sends an asynchronous BOINC_* request (words[1], its id, is
// filled in), then polls RESULTS until its result comes, and returns the
// result's text after the id.
func (gs *gahpSession) request(ctx context.Context, words ...string) (string, error) {
	id := gs.next
	gs.next++
	words[1] = strconv.Itoa(id)
	if r, err := gs.command(words...); err != nil || r != "S" {
		return "", fmt.Errorf("%s: %q, %v", words[0], r, err)
	}
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		r, err := gs.command("RESULTS")
		if err != nil {
			return "", err
		}
		n, err := strconv.Atoi(strings.TrimPrefix(r, "S "))
		if err != nil {
			return "", fmt.Errorf("RESULTS: %q", r)
		}
		var mine string
		found := false
		for range n {
			l, err := gs.out.ReadString('\n')
			if err != nil {
				return "", fmt.Errorf("reading RESULTS: %w", err)
			}
			rid, text, _ := strings.Cut(strings.TrimSuffix(l, "\n"), " ")
			if rid != strconv.Itoa(id) {
				return "", fmt.Errorf("RESULTS: a result for request %s, not asked for (%s)", rid, text)
			}
			mine, found = text, true
		}
		if found {
			return mine, nil
		}
	}
	return "", ctx.Err()
}

// quit ends the session (QUIT, then the process).
func (gs *gahpSession) quit(s *soak) {
	io.WriteString(gs.in, "QUIT\n")
	gs.in.Close()
	done := make(chan struct{})
	go func() { gs.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		gs.cmd.Process.Kill()
		<-done
	}
	s.cpu.client(gs.cmd)
}
