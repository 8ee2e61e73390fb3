package setup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/standin"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
)

// Doctor re-checks an installed server root and its BOINC project: the
// configuration, the database, the project, the hook, the templates, hard
// links into download/, the daemon entries, the stand-in's volunteer loop,
// file ownership and Apache's password file. Every finding says what to do.
func Doctor(ctx context.Context, root string) Findings {
	var f Findings
	root, err := filepath.Abs(root)
	if err != nil {
		f.add(Problem, "server root %s: %v", root, err)
		return f
	}
	cfg, err := engine.LoadConfig(root)
	if err != nil {
		f.add(Problem, "%v", err)
		return f
	}
	f.add(OK, "server root %s: %s read", root, engine.ConfigFile)
	if cfg.HookScript == "" || strings.ContainsAny(cfg.HookScript, " \t/") {
		f.add(Problem, "hook_script %q in %s must be one word, a file name in the project's bin/: script_assimilator passes no arguments to a --script of several words", cfg.HookScript, engine.ConfigFile)
	}
	for _, d := range []string{"pool", "dav", "dav-lock", "results", "etc", "bin"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || !fi.IsDir() {
			f.add(Problem, "%s is missing: run `rboinc-server init --root %s` again", filepath.Join(root, d), root)
		}
	}

	users := checkDB(ctx, &f, root)
	exe := filepath.Join(root, "bin", "rboinc-server")
	checkExe(ctx, &f, exe)

	pc := CheckProject(cfg.BoincProject, !cfg.Simulated)
	f = append(f, pc.Findings...)
	if pc.Project == nil {
		return f
	}
	p := pc.Project
	checkHook(&f, p, cfg.HookScript, exe, root)
	if _, err := os.Stat(p.DownloadDir); err == nil {
		linkCheck(&f, root, p.DownloadDir)
	}
	checkAssimilation(ctx, &f, root, cfg, p, pc.Queues)
	checkQueueApps(ctx, &f, p, cfg.Simulated, pc.Queues)
	checkOutputLimits(&f, pc.Queues)
	checkConstantInputs(&f, p, pc.Queues)
	checkCreation(ctx, &f, cfg, p)
	if cfg.Simulated {
		checkVolunteer(&f, p.Dir)
	} else if cfg.Assimilator != AssimNative {
		for _, d := range DaemonLines(p, pc.Queues, cfg.HookScript) {
			switch {
			case d.Present:
				f.add(OK, "config.xml runs rboinc's hook for BOINC application %s", d.App)
			case d.Conflict != "":
				f.add(Problem, "%s. The entry should be: %s", d.Conflict, d.Line)
			default:
				f.add(Problem, "config.xml has no script_assimilator for BOINC application %s, so its chains never advance: add %s to <daemons> in %s and restart the daemons (bin/stop; bin/start)", d.App, d.Line, filepath.Join(p.Dir, "config.xml"))
			}
		}
		if HasCreator(p) {
			f.add(OK, "config.xml runs rboinc's creator (%s)", CreatorCmd)
		} else {
			f.add(Note, "config.xml does not run rboinc's creator: each hook call then creates its chain's next step itself, with a create_work run of its own (a few dozen steps per second at most). For batches, add %s to <daemons> in %s and restart the daemons", CreatorLine(), filepath.Join(p.Dir, "config.xml"))
		}
	}
	if !cfg.Simulated {
		if HasNotifier(p) {
			f.add(OK, "config.xml runs rboinc's notifier (%s)", NotifierCmd)
		} else {
			f.add(Note, "config.xml does not run rboinc's notifier: the notifications users register (webhooks, e-mail) wait in the outbox until a `rboinc-server serve` or the notifier daemon sends them. Add %s to <daemons> in %s and restart the daemons", NotifierLine(), filepath.Join(p.Dir, "config.xml"))
		}
	}
	if !cfg.Simulated {
		checkDaemonsRun(&f, p, DaemonLines(p, pc.Queues, cfg.HookScript))
		ownerCheck(&f, root, p)
		checkLateReplicas(&f, p)
	}
	checkSpool(&f, root)
	if users != nil { // the database opens at this rboinc's schema version
		checkChainsMove(ctx, &f, root, p)
	}
	checkOwnership(&f, root)
	checkSecrets(&f, root, cfg)
	if users != nil {
		checkDAVPasswd(&f, root, users)
	}
	return f
}

// checkDB reports the state database's schema version and, when this
// rboinc uses it as it is, opens it and returns its users (nil otherwise).
// doctor does not upgrade the database: it says so.
func checkDB(ctx context.Context, f *Findings, root string) []store.User {
	path, err := engine.StateLocation(root)
	if err != nil {
		f.add(Problem, "%v", err)
		return nil
	}
	name := store.Describe(path) // no password in what doctor prints
	if !store.IsMySQL(path) {
		if _, err := os.Stat(path); err != nil {
			f.add(Problem, "the state database %s is missing: run `rboinc-server init --root %s` (it keeps existing data)", path, root)
			return nil
		}
	}
	st, err := store.Inspect(ctx, path)
	if err != nil {
		f.add(Problem, "cannot read the state database's schema version: %v", err)
		return nil
	}
	if !st.Current() {
		f.add(Problem, "%s", schemaProblem(st, name, root))
		return nil
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		f.add(Problem, "cannot open the state database %s: %v", name, err)
		return nil
	}
	defer db.Close()
	us, err := db.Users(ctx)
	if err != nil {
		f.add(Problem, "cannot read the state database %s: %v", name, err)
		return nil
	}
	if us == nil {
		us = []store.User{}
	}
	f.add(OK, "state database opens (schema version %d, this rboinc's); %s", st.Version, words.Count(len(us), "user", "users"))
	if len(us) == 0 {
		f.add(Note, "no users yet: `rboinc-server user add --root %s NAME` prints a user's token", root)
	}
	return us
}

// schemaProblem says what a schema version other than this rboinc's means
// and what to do.
func schemaProblem(st store.SchemaStatus, path, root string) string {
	if !st.Behind() {
		return (&store.SchemaTooNewError{File: path, Version: st.Version, Known: st.Known}).Error() + " (a newer rboinc-server upgraded it; install that one again, then `rboinc-server init` to put it into the root)"
	}
	what := fmt.Sprintf("at schema version %d", st.Version)
	if st.Unversioned {
		what = "made by a release before schema versions (version 0)"
	}
	return fmt.Sprintf("the state database %s is %s, this rboinc's is %d: stop the server and BOINC's daemons, back it up, then run `rboinc-server migrate --root %s` (any rboinc process that opens it upgrades it too)", path, what, st.Known, root)
}

// checkExe runs the installed server binary, which the hook, the CGI
// program and the stand-in's create_work all are.
func checkExe(ctx context.Context, f *Findings, exe string) {
	if unix.Access(exe, unix.X_OK) != nil {
		f.add(Problem, "the installed server binary %s is missing or not executable: run init again with the rboinc-server you mean to use", exe)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--help")
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // no GATEWAY_INTERFACE: not as CGI
	if out, err := cmd.CombinedOutput(); err != nil {
		f.add(Problem, "the installed server binary %s does not run (%v): %s", exe, err, firstLine(out))
		return
	}
	f.add(OK, "the installed server binary %s runs", exe)
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

var hookRootRE = regexp.MustCompile(`--root '([^']*)'`)

// checkHook compares the project's bin/<hook> with what init installs.
func checkHook(f *Findings, p *boinc.Project, hook, exe, root string) {
	path := filepath.Join(p.Dir, "bin", hook)
	if target, err := os.Readlink(path); err == nil {
		switch want := hookLinkTarget(exe); {
		case target == want && want != "":
			f.add(OK, "assimilator hook %s installed for this root (a link to %s)", path, target)
		case filepath.Base(target) == HookExe && filepath.Dir(filepath.Dir(target)) != root:
			f.add(Problem, "the assimilator hook %s serves another server root (%s), not %s: two roots cannot share one project's hook; run init again for the root that should own it", path, filepath.Dir(filepath.Dir(target)), root)
		default:
			f.add(Problem, "%s is not the hook rboinc installs for this root: run `rboinc-server init --root %s` to reinstall it", path, root)
		}
		return
	}
	data, err := os.ReadFile(path)
	switch {
	case err != nil:
		f.add(Problem, "the assimilator hook %s is missing: run `rboinc-server init --root %s` to install it", path, root)
	case hookLinkTarget(exe) != "" || string(data) != hookScript(hook, exe, root):
		if m := hookRootRE.FindSubmatch(data); m != nil && string(m[1]) != root {
			f.add(Problem, "the assimilator hook %s serves another server root (%s), not %s: two roots cannot share one project's hook; run init again for the root that should own it", path, m[1], root)
		} else {
			f.add(Problem, "%s is not the hook rboinc installs for this root: run `rboinc-server init --root %s` to reinstall it", path, root)
		}
	case unix.Access(path, unix.X_OK) != nil:
		f.add(Problem, "the assimilator hook %s is not executable: chmod 755 it", path)
	default:
		f.add(OK, "assimilator hook %s installed for this root", path)
	}
}

// checkVolunteer sees whether the stand-in's volunteer loop (in `serve`,
// or `volunteer` beside a CGI deployment) holds the project's lock.
func checkVolunteer(f *Findings, proj string) {
	alive, err := flockHeld(filepath.Join(proj, "standin.lock"))
	switch {
	case err != nil:
		f.add(Note, "cannot tell whether the stand-in's volunteer loop runs: %v", err)
	case alive:
		f.add(OK, "the BOINC stand-in's volunteer loop is running")
	default:
		idle, err := standin.Idle(proj)
		if err == nil && idle {
			f.add(Note, "the BOINC stand-in's volunteer loop is not running (nothing is waiting now): `rboinc-server serve` runs it, or `rboinc-server volunteer --root ROOT` beside Apache")
		} else {
			f.add(Problem, "work units are waiting but the BOINC stand-in's volunteer loop is not running: start `rboinc-server serve`, or `rboinc-server volunteer --root ROOT` when Apache serves the API")
		}
	}
}

// ownerCheck warns when the server root and the project belong to
// different users: the hook runs as the project's daemons' user and writes
// the server root, and so do the web server and `serve`.
func ownerCheck(f *Findings, root string, p *boinc.Project) {
	ru, err1 := ownerOf(root)
	pu, err2 := ownerOf(p.DownloadDir)
	if err1 != nil || err2 != nil || ru == pu {
		return
	}
	f.add(Note, "the server root belongs to %s but the BOINC project (%s) to %s: the hook runs as the project's daemons' user and writes the server root, and so does the web server. Run them as one user (as BOINC's own Apache setup does), or give both a group with write access to %s", userName(ru), p.DownloadDir, userName(pu), root)
}

func ownerOf(path string) (uint32, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Uid, nil
}

func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return "uid " + id
}

// checkOwnership finds files of the server root that belong to someone
// other than the root's owner, typically made by an administrator working
// as root: the server, the hook and Apache then cannot change them.
func checkOwnership(f *Findings, root string) {
	owner, err := ownerOf(root)
	if err != nil {
		return
	}
	var paths []string
	for _, n := range []string{engine.ConfigFile, "state.db", "state.db-wal", "state.db-shm", DAVPasswdFile, "pool", "dav", "results", "etc", "bin", "bin/rboinc-server"} {
		paths = append(paths, filepath.Join(root, n))
	}
	for _, d := range []string{"dav", "results"} {
		ents, _ := os.ReadDir(filepath.Join(root, d))
		for i, e := range ents {
			if i == 1000 {
				break
			}
			paths = append(paths, filepath.Join(root, d, e.Name()))
		}
	}
	var wrong []string
	for _, p := range paths {
		if u, err := ownerOf(p); err == nil && u != owner {
			rel, _ := filepath.Rel(root, p)
			wrong = append(wrong, rel+" ("+userName(u)+")")
		}
	}
	if len(wrong) == 0 {
		f.add(OK, "the server root's files belong to its owner, %s", userName(owner))
		return
	}
	sort.Strings(wrong)
	more := ""
	if len(wrong) > 5 {
		more = fmt.Sprintf(" and %d more", len(wrong)-5)
		wrong = wrong[:5]
	}
	f.add(Problem, "%s%s in %s belong to another user than the root's owner %s, who runs the server, the hook and Apache and cannot change them: `chown -R %s: %s`, and run administration commands as %s", strings.Join(wrong, ", "), more, root, userName(owner), userName(owner), root, userName(owner))
}

// checkDAVPasswd compares dav.htpasswd (Apache's WebDAV) with the users.
func checkDAVPasswd(f *Findings, root string, users []store.User) {
	m, err := DAVPasswdUsers(root)
	if err != nil {
		f.add(Problem, "cannot read %s: %v", filepath.Join(root, DAVPasswdFile), err)
		return
	}
	known := map[string]bool{}
	var missing []string
	for _, u := range users {
		known[u.Name] = true
		_, has := m[u.Name]
		switch {
		case u.Disabled && has:
			f.add(Problem, "user %s is disabled but %s still lets them upload through Apache: run `rboinc-server user disable --root %s %s` again", u.Name, DAVPasswdFile, root, u.Name)
		case !u.Disabled && !has:
			missing = append(missing, u.Name)
		}
		if d := filepath.Join(root, "dav", u.Name); !u.Disabled {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				f.add(Note, "%s's scratch area %s does not exist yet: Apache's mod_dav cannot make collections in it (the original clients' uploads fail) until it does; `rboinc-server user rotate` creates it, or mkdir it as the root's owner", u.Name, d)
			}
		}
	}
	if len(missing) > 0 {
		f.add(Note, "user(s) %s have no line in %s: when Apache serves the WebDAV area they cannot upload; `rboinc-server user rotate --root %s NAME` gives a new token that works everywhere (only matters for the Apache deployment)", strings.Join(missing, ", "), DAVPasswdFile, root)
	}
	var stray []string
	for u := range m {
		if !known[u] {
			stray = append(stray, u)
		}
	}
	if len(stray) > 0 {
		sort.Strings(stray)
		f.add(Problem, "%s lets in %s, who are not rboinc users: remove their lines", filepath.Join(root, DAVPasswdFile), strings.Join(stray, ", "))
	}
}

// checkSpool looks for hook calls that wait too long to be taken in, and
// for entries the creator set aside as unreadable.
func checkSpool(f *Findings, root string) {
	dir := filepath.Join(root, engine.SpoolDirName)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // no hook call yet
	}
	// Every hook call writes here first: a spool the hook cannot write
	// into stops BOINC's assimilators.
	if probe, err := os.CreateTemp(dir, ".doctor-*"); err != nil {
		f.add(Problem, "the hook cannot write into its spool %s (%v): every hook call fails and BOINC's assimilators stop; give the directory back to the user BOINC's daemons run as (chown -R USER %s)", dir, err, dir)
	} else {
		probe.Close()
		os.Remove(probe.Name())
	}
	var bad, old int
	var unplaced []string
	for _, d := range ents {
		name := d.Name()
		switch {
		case strings.HasPrefix(name, ".bad-"):
			bad++
		case strings.HasPrefix(name, spool.UnplacedPrefix):
			unplaced = append(unplaced, name)
		case strings.HasPrefix(name, "."):
		default:
			if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > 5*time.Minute {
				old++
			}
		}
	}
	if bad > 0 {
		f.add(Problem, "%s in %s could not be read: set aside (.bad-*): their chains wait; see the creator's log", words.Count(bad, "hook call", "hook calls"), dir)
	}
	if len(unplaced) > 0 {
		why := ""
		if b, err := os.ReadFile(filepath.Join(dir, unplaced[0], spool.ReasonFile)); err == nil {
			why, _, _ = strings.Cut(string(b), "\n")
			why = ": " + why
		}
		f.add(Problem, "%s for work units named like rboinc's that rboinc could not place: kept, with their outputs, in %s (the first: %s%s; the chains concerned say so in rboinc-retrieve -status): read the entry's files call and %s; once the cause is fixed, rename an entry without its %s prefix and the creator takes it in again, or remove it", words.Count(len(unplaced), "hook call", "hook calls"), dir, unplaced[0], why, spool.ReasonFile, spool.UnplacedPrefix)
	}
	if old > 0 {
		f.add(Problem, "%s waited more than 5 minutes in %s: a process holds the creator lock (%s) but does not take them in; restart `rboinc-server serve` or the creator daemon", words.Count(old, "hook call has", "hook calls have"), dir, filepath.Join(root, engine.CreatorLockName))
	}
}
