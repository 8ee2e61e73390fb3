package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// ledger is what the journal of a killed run says: everything the end
// checks need from before the kill, and what was in flight.
type ledger struct {
	site *siteRec
	segs []segment // the driver's lives so far
	last time.Time // the last record's time: about when the run was killed

	submitted map[string]bool                 // user/group: accepted
	killed    []rec                           // submissions a fault's killed client began, in order
	controls  map[string]rec                  // user/group/chain: its control done
	extends   map[string]int                  // user/group/chain: an extend begun, the steps before it
	retrieved map[string]map[string]*fileSeen // user/group → file → as booked
	sums      map[string]map[string]string    // retrieval directory → the server's MD5s listed before it
	retrDone  map[string]bool                 // retrieval directory: its files booked
	finished  map[string]rec                  // user/group: checked (the chains' final states)
	purged    map[string]bool

	faults, retries map[string]int
	cpu             map[int]rec // life → its last processor time record
	kills           []senderKill
	deliveries      map[string][]time.Time
	events          map[string]struct{}
	total           int
	samples         []sample

	masterN     int // the last master tag begun (0: none)
	masterPhase string
	masterOut   string
	gahpN       int // the last GAHP batch begun
	gahpPhase   string
	gahpDone    int // GAHP batches run to their end and checked

	chainsOK, stepsOK int   // chains checked, and their steps
	oneStep           []rec // the masters' and GAHP's groups checked
	problems          []string
}

// segment is one life of the driver: from its start to its last record.
type segment struct{ start, last time.Time }

func key(parts ...string) string { return strings.Join(parts, "/") }

// replay reads the records of a journal into a ledger.
func replay(recs []rec) (*ledger, error) {
	l := &ledger{submitted: map[string]bool{}, controls: map[string]rec{}, extends: map[string]int{},
		retrieved: map[string]map[string]*fileSeen{}, sums: map[string]map[string]string{}, retrDone: map[string]bool{},
		finished: map[string]rec{}, purged: map[string]bool{}, faults: map[string]int{}, retries: map[string]int{},
		deliveries: map[string][]time.Time{}, events: map[string]struct{}{}}
	// A life ends at its last record before the next one's resume (what
	// a resumed driver writes while it starts again, webhook deliveries
	// received before its run starts, is of the new life).
	open := true
	for _, r := range recs {
		at := time.Unix(0, r.At)
		switch r.T {
		case "start":
			open = true
		case "resume":
			if open {
				// The kill of the whole run that ended the life before:
				// it stopped the process sending notifications too, so a
				// delivery received before it may come again after.
				l.kills = append(l.kills, senderKill{kind: "whole run", at: l.last, sender: true})
			}
			open = false
		}
		if open && r.T != "start" {
			l.last = at
			if n := len(l.segs); n > 0 {
				l.segs[n-1].last = at
			}
		}
		g := key(r.User, r.Group)
		switch r.T {
		case "options", "resume":
		case "problem":
			l.problems = append(l.problems, r.Out)
		case "site":
			l.site = r.Site
		case "start":
			l.segs = append(l.segs, segment{start: at, last: at})
		case "end":
			return nil, errors.New("the run ended already: nothing to resume")
		case "submit":
			if r.Killed {
				l.killed = append(l.killed, r)
			}
		case "submitted":
			l.submitted[g] = true
		case "extend":
			l.extends[key(r.User, r.Group, r.Chain)] = r.Before
		case "control":
			l.controls[key(r.User, r.Group, r.Chain)] = r
		case "retrieve":
			l.sums[r.Dir] = r.Sums
		case "retrieved":
			if l.retrieved[g] == nil {
				l.retrieved[g] = map[string]*fileSeen{}
			}
			for _, f := range r.Files {
				book(l.retrieved[g], f, r.Code)
			}
			l.retrDone[r.Dir] = true
		case "finished":
			l.finished[g] = r
			l.chainsOK += r.Chains
			l.stepsOK += r.Steps
		case "checked":
			l.oneStep = append(l.oneStep, r)
			l.chainsOK += r.Chains
			l.stepsOK += r.Steps
		case "purged":
			l.purged[g] = true
		case "fault":
			l.faults[r.Kind]++
		case "retry":
			l.retries[r.Kind]++
		case "cpu":
			// Each record is its life's total so far: the last one of
			// each life counts.
			if n := len(l.segs); n > 0 {
				if l.cpu == nil {
					l.cpu = map[int]rec{}
				}
				l.cpu[n-1] = r
			}
		case "kill":
			l.kills = append(l.kills, senderKill{kind: r.Kind, at: at, sender: r.Sender})
		case "hook":
			l.total++
			l.deliveries[r.ID] = append(l.deliveries[r.ID], at)
			l.events[r.Kind] = struct{}{}
		case "sample":
			l.samples = append(l.samples, sample{seg: r.Seg, at: time.Duration(r.Steps), rss: r.RSS, fds: r.FDs, files: r.NFile})
		case "master":
			l.masterN, l.masterPhase, l.masterOut = r.N, r.Kind, r.Out
		case "gahp":
			l.gahpN, l.gahpPhase = r.N, r.Kind
			if r.Kind == "done" {
				l.gahpDone++
			}
		default:
			return nil, fmt.Errorf("the journal has a record of an unknown kind %q (written by another rbsoak?)", r.T)
		}
	}
	if l.site == nil {
		return nil, errors.New("the run was killed before its site was ready (no site record): start it again in a new work directory")
	}
	// The kill this resume follows (its resume record not yet written).
	l.kills = append(l.kills, senderKill{kind: "whole run", at: l.last, sender: true})
	return l, nil
}

// book notes file name as retrieved by a run that exited code: a file
// that came again after a run that acknowledged it counts twice.
func book(m map[string]*fileSeen, name string, code int) {
	f := m[name]
	if f == nil {
		f = &fileSeen{}
		m[name] = f
	}
	if f.acked {
		f.times++
	} else {
		f.times = 1
	}
	if code == 0 {
		f.acked = true
	}
}

// restore puts the ledger's state into the soak before it goes on.
func (s *soak) restore(l *ledger) {
	s.faults, s.retries, s.senderKills = l.faults, l.retries, l.kills
	s.samples = l.samples
	s.seg = len(l.segs)
	s.segs = l.segs
	s.hooks.mu.Lock()
	s.hooks.deliveries, s.hooks.events, s.hooks.total = l.deliveries, l.events, l.total
	s.hooks.mu.Unlock()
	s.masters.started = l.masterN
	s.gahpBatches = l.gahpDone
	s.chainsOK, s.stepsOK = l.chainsOK, l.stepsOK
	for _, p := range l.problems {
		s.problems = append(s.problems, "(before a kill of the whole run) "+p)
	}
	s.clientN = len(l.killed)
}

// restoreGroup gives a group of the plan (or a fault's) what the ledger
// says of it: submitted, its controls done, its files retrieved, checked.
func (s *soak) restoreGroup(g *group) {
	l := s.led
	if l == nil {
		return
	}
	gk := key(g.user.name, g.name)
	g.submitted = l.submitted[gk]
	if m := l.retrieved[gk]; m != nil {
		g.retrieved = m
	}
	for _, c := range g.chains {
		ck := key(g.user.name, g.name, c.name)
		if r, ok := l.controls[ck]; ok {
			c.controlDone, c.mustStay = true, r.Stay
			if r.Steps > 0 {
				c.steps = r.Steps
			}
		}
		if b, ok := l.extends[ck]; ok && !c.controlDone {
			c.extendBefore = b
		}
	}
	if r, ok := l.finished[gk]; ok {
		g.finished, g.purged = true, l.purged[gk]
		for _, c := range g.chains {
			c.final = r.Finals[c.name]
		}
	}
}

// bookOrphans books the files of the retrievals the kill cut short, as
// their user would find them in the directories they wrote into: they
// came (and may have been acknowledged), so the retrieval run again does
// not need to bring them. Then the directories go.
func (s *soak) bookOrphans(groups map[string]*group) {
	dirs, _ := filepath.Glob(filepath.Join(s.o.work, "retrieve-*"))
	for _, dir := range dirs {
		if s.led.retrDone[dir] {
			os.RemoveAll(dir)
			continue
		}
		// retrieve-USER-GROUP-RANDOM
		f := strings.Split(filepath.Base(dir), "-")
		var g *group
		if len(f) == 4 {
			g = groups[key(f[1], f[2])]
		}
		if g == nil || g.finished {
			os.RemoveAll(dir)
			continue
		}
		s.bookDir(g, dir, -1, s.led.sums[dir])
		os.RemoveAll(dir)
	}
}

// segmentsLine says how long each life of the driver ran.
func segmentsLine(segs []segment, now time.Time) (ran time.Duration, line string) {
	var parts []string
	for i, sg := range segs {
		end := sg.last
		if i == len(segs)-1 {
			end = now
		}
		d := end.Sub(sg.start)
		ran += d
		parts = append(parts, d.Round(time.Second).String())
	}
	if len(segs) > 1 {
		wall := now.Sub(segs[0].start)
		line = fmt.Sprintf("one run in %d lives of the driver (%s; %s from first start to end, %s of it stopped)",
			len(segs), strings.Join(parts, " + "), wall.Round(time.Second), (wall - ran).Round(time.Second))
	}
	return ran, line
}

// samplesBySeg splits the samples by the driver's life they were taken in.
func samplesBySeg(ss []sample) [][]sample {
	var out [][]sample
	for _, x := range ss {
		for len(out) <= x.seg {
			out = append(out, nil)
		}
		out[x.seg] = append(out[x.seg], x)
	}
	return slices.DeleteFunc(out, func(x []sample) bool { return len(x) == 0 })
}

// openResumed finds the site of the killed run in the work directory
// again: the journal read, the server root mounted, MariaDB started on its
// data, the webhook receiver on its address, the server and its daemons.
func (s *soak) openResumed(ctx context.Context, jpath string) error {
	recs, err := readJournal(jpath)
	if err != nil {
		return err
	}
	l, err := replay(recs)
	if err != nil {
		return err
	}
	s.led = l
	if s.j, err = openJournal(jpath, false); err != nil {
		return err
	}
	// Its chains: a run grown by -chains stays grown at the next resume.
	s.j.addSync(rec{T: "resume", Chains: s.o.chains})
	site := l.site
	s.o.rootfs = site.RootFS // what it was (a plain directory when the mount failed)
	if s.o.rootfs == rootTmpfs {
		return errors.New("the server root was on a tmpfs, gone with the killed run: a run to resume needs -rootfs image (or dir)")
	}
	// What a kill without a stop of the machine left running (no pid
	// namespace): the stand-in's daemons would work on beside the new
	// ones.
	s.root = site.Root
	for _, pid := range s.rootProcs("") {
		fmt.Printf("rbsoak: -resume: process %d of the killed run still runs; killing it\n", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.mnt = site.Mnt
	if s.o.rootfs != rootImage || !isMounted(s.mnt) {
		s.mountRoot(ctx, false) // a plain directory: the disk-full fault skipped
	} else {
		s.mounted = true
		os.Remove(filepath.Join(s.mnt, "filler"))
	}
	if _, err := os.Stat(filepath.Join(s.root, engine.ConfigFile)); err != nil {
		return fmt.Errorf("the killed run's server root: %w", err)
	}
	for _, u := range site.Users {
		s.users = append(s.users, &user{name: u.Name, token: u.Token})
	}
	if s.o.mariadb {
		if err := s.restartMariaDB(ctx, site.DBLink, filepath.Join(s.o.work, "mariadb")); err != nil {
			return err
		}
		s.stateURL, s.boincURL, s.boincDBFile = site.StateURL, site.BoincURL, site.BoincDBFile
	}
	// The run's binaries are its own (bin/); this driver may be of
	// another build. Its checks read their state, which must then be of
	// its schema: it would otherwise misread it, or upgrade it under the
	// run's server, which refuses a newer schema.
	st, err := engine.OpenCurrentState(ctx, s.root)
	if err != nil {
		return fmt.Errorf("-resume: this rbsoak cannot check the run's state (resume with the run's own %s, or one built with the same schema): %w",
			filepath.Join(s.o.work, "bin", "rbsoak"), err)
	}
	st.Close()
	if s.hooks, err = startWebhooks(site.HookAddr, s.j); err != nil {
		// Its port taken meanwhile: the users' webhooks are pointed at
		// the new one, as an admin would.
		if s.hooks, err = startWebhooks("127.0.0.1:0", s.j); err != nil {
			return err
		}
		for i, u := range s.users {
			out, err := exec.CommandContext(ctx, filepath.Join(s.o.bin, "rboinc-server"), "user", "notify", "--root", s.root, u.name,
				"--webhook", s.hooks.url+"/"+u.name, "--events", webhookEvents(i, s.o.stepEvents)).CombinedOutput()
			if err != nil {
				return fmt.Errorf("user notify %s: %w: %s", u.name, err, out)
			}
		}
	}
	s.baseline = leftovers{files: site.BaseFiles, rows: site.BaseRows}
	s.restore(l)
	ran, _ := segmentsLine(l.segs, l.last)
	fmt.Printf("rbsoak: resuming the run in %s: life %d of the driver; %s run before, killed about %s ago; %d groups checked, faults %v\n",
		s.o.work, s.seg+1, ran.Round(time.Second), time.Since(l.last).Round(time.Second), len(l.finished), l.faults)
	return s.startDaemons(ctx, site.Addr)
}

// resumable tells whether the journal at path is of a run that did not
// end and can go on (its server root not on a tmpfs).
func resumable(path string) bool {
	recs, err := readJournal(path)
	if err != nil {
		return false
	}
	l, err := replay(recs)
	return err == nil && l.site.RootFS != rootTmpfs
}

// isMounted tells whether a file system is mounted on dir.
func isMounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

// siteRec is what a resumed run needs of the site just made.
func (s *soak) siteRec() *siteRec {
	r := &siteRec{Root: s.root, Mnt: s.mnt, RootFS: s.o.rootfs, Addr: strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/rboinc_cgi"),
		HookAddr: strings.TrimPrefix(s.hooks.url, "http://"), DBLink: s.dbDir, StateURL: s.stateURL, BoincURL: s.boincURL,
		BoincDBFile: s.boincDBFile, BaseFiles: s.baseline.files, BaseRows: s.baseline.rows}
	if !s.mounted && s.o.rootfs != rootDir {
		r.RootFS = rootDir
	}
	for _, u := range s.users {
		r.Users = append(r.Users, userRec{Name: u.name, Token: u.token})
	}
	return r
}

// resumeGroups gives the plan's groups what the journal says of them,
// books what the retrievals the kill cut short wrote, and starts again the
// groups of the client fault that were not checked.
func (s *soak) resumeGroups(ctx context.Context, work map[string][]*group) {
	byKey := map[string]*group{}
	for _, gs := range work {
		for _, g := range gs {
			s.restoreGroup(g)
			byKey[key(g.user.name, g.name)] = g
		}
	}
	users := map[string]*user{}
	for _, u := range s.users {
		users[u.name] = u
	}
	var killed []*group
	for i, r := range s.led.killed {
		u := users[r.User]
		if u == nil {
			continue
		}
		g := s.killedGroup(i, u)
		if g.name != r.Group {
			s.problem("the journal's client fault group %s is not the %dth (%s)", r.Group, i, g.name)
			continue
		}
		if err := s.writeJobs(g); err != nil {
			s.problem("writing the jobs of %s: %v", g.name, err)
			continue
		}
		s.restoreGroup(g)
		byKey[key(u.name, g.name)] = g
		killed = append(killed, g)
	}
	// The finished groups go into the list the end checks read (their
	// events); the others join it as they are submitted or finished.
	for _, r := range s.led.oneStep {
		if u := users[r.User]; u != nil {
			g := &group{user: u, name: r.Group, finished: true, purged: true, retrieved: map[string]*fileSeen{}}
			for name, final := range r.Finals {
				g.chains = append(g.chains, &chain{name: name, final: final})
			}
			byKey[key(u.name, g.name)] = g
		}
	}
	s.mu.Lock()
	for _, g := range byKey {
		if g.finished {
			s.groups = append(s.groups, g)
		}
	}
	s.mu.Unlock()
	s.bookOrphans(byKey)
	for _, g := range killed {
		if g.finished {
			if !g.purged {
				s.purgeAgain(ctx, g, "purge")
			}
			continue
		}
		s.extra.Add(1)
		go func() { defer s.extra.Done(); s.submitAndFinish(g) }()
	}
}
