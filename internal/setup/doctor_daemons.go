package setup

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
)

// localHost is the short host name, as BOINC's bin/start names its
// per-host directories (pid_<host>, log_<host>, tmp_<host>).
func localHost() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}

// rboincDaemon is a daemon of config.xml that rboinc's chains need.
type rboincDaemon struct {
	what  string // for the reader: "the script_assimilator of BOINC application X"
	entry boinc.Daemon
}

// rboincDaemons finds, in config.xml, the assimilators of the queues'
// applications that run rboinc's hook, the creator and the notifier.
func rboincDaemons(p *boinc.Project, lines []DaemonLine) []rboincDaemon {
	var out []rboincDaemon
	for _, d := range p.DaemonEntries {
		switch prog := d.Program(); {
		case prog == CreatorCmd:
			out = append(out, rboincDaemon{what: "rboinc's creator (" + CreatorCmd + ")", entry: d})
		case prog == NotifierCmd:
			out = append(out, rboincDaemon{what: "rboinc's notifier (" + NotifierCmd + ")", entry: d})
		case isNative(d.Cmd):
			out = append(out, rboincDaemon{what: "rboinc's native assimilator", entry: d})
		case prog == "script_assimilator":
			for _, l := range lines {
				if l.Present && assimilatorApp(d.Cmd) == l.App {
					out = append(out, rboincDaemon{what: "the script_assimilator of BOINC application " + l.App, entry: d})
				}
			}
		}
	}
	return out
}

// assimilatorApp is the --app of a script_assimilator command.
func assimilatorApp(cmd string) string {
	f := strings.Fields(cmd)
	for i := 1; i+1 < len(f); i++ {
		if strings.TrimLeft(f[i], "-") == "app" {
			return f[i+1]
		}
	}
	return ""
}

// checkDaemonsRun tells whether BOINC runs the daemons rboinc's chains need:
// a daemon that bin/start started holds a lock on its file in pid_<host>/;
// nothing holds it once the daemon exited (a failing hook makes BOINC's
// assimilator exit) or bin/stop stopped it.
func checkDaemonsRun(f *Findings, p *boinc.Project, lines []DaemonLine) {
	if _, err := os.Stat(filepath.Join(p.Dir, "stop_daemons")); err == nil {
		f.add(Problem, "BOINC's daemons are stopped: %s is present (bin/stop leaves it), so no assimilator runs and no chain advances: run bin/start in %s", filepath.Join(p.Dir, "stop_daemons"), p.Dir)
	}
	host := localHost()
	locks := map[string]string{}
	for _, d := range rboincDaemons(p, lines) {
		e := d.entry
		if other, ok := locks[e.LockName()]; ok && d.entry.Program() == "script_assimilator" {
			f.add(Problem, "%s and %s share the lock file %s, so bin/start starts only one of them: give each its own <output> (as init prints them)", other, d.what, e.LockName())
		}
		locks[e.LockName()] = d.what
		runsOn := e.Host
		if runsOn == "" {
			runsOn = p.Host
		}
		switch {
		case e.Disabled:
			f.add(Problem, "%s is disabled in config.xml (<disabled>): chains that need it do not advance; remove <disabled> and run bin/start", d.what)
			continue
		case runsOn != "" && host != "" && runsOn != host:
			f.add(Note, "%s runs on host %s (config.xml <host>); check it there", d.what, runsOn)
			continue
		}
		lock := filepath.Join(p.HostDir("pid", host), e.LockName())
		pid, held, err := lockHolder(lock, "POSIX", "FLOCK", "OFDLCK")
		switch {
		case err != nil:
			f.add(Note, "cannot tell whether %s runs: %v", d.what, err)
		case held && pid > 0:
			f.add(OK, "%s runs (process %d)", d.what, pid)
		case held:
			f.add(OK, "%s runs", d.what)
		default:
			f.add(Problem, "%s is not running (no process holds %s): its chains do not advance. A failing hook makes BOINC's assimilator exit (see %s); bin/start starts it, and BOINC's crontab entry `bin/start --cron` restarts stopped daemons every few minutes",
				d.what, lock, filepath.Join(p.HostDir("log", host), e.LogName()))
		}
	}
}

func isNative(cmd string) bool {
	_, ok := boinc.NativeAssimilatorArgs(cmd)
	return ok
}
