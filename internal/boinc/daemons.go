package boinc

import (
	"path/filepath"
	"strings"
)

// Daemon is one <daemon> of config.xml.
type Daemon struct {
	Cmd      string
	Host     string // <host>: the machine whose bin/start runs it ("" = the project's <host>)
	Output   string // <output>: its log file's name in log_<host>/
	PidFile  string // <pid_file>
	LockFile string // <lock_file>
	Disabled bool
}

// Program is the base name of the daemon's program, as bin/start names its
// files after it.
func (d Daemon) Program() string {
	f := strings.Fields(d.Cmd)
	if len(f) == 0 {
		return ""
	}
	if f[0] == "run_in_ops" && len(f) > 1 {
		return filepath.Base(f[1])
	}
	return filepath.Base(f[0])
}

// LockName is the file in pid_<host>/ that bin/start locks (POSIX lockf)
// while the daemon runs: <lock_file>, else <output>.lock, else
// <program>.lock.
func (d Daemon) LockName() string {
	switch {
	case d.LockFile != "":
		return d.LockFile
	case d.Output != "" && !strings.HasPrefix(d.Output, "/dev/"):
		return d.Output + ".lock"
	}
	return d.Program() + ".lock"
}

// LogName is its log file in log_<host>/: <output>, else <program>.log.
func (d Daemon) LogName() string {
	if d.Output != "" {
		return d.Output
	}
	return d.Program() + ".log"
}

// PidName is its pid file in pid_<host>/: <pid_file>, else <program>.pid.
func (d Daemon) PidName() string {
	if d.PidFile != "" {
		return d.PidFile
	}
	return d.Program() + ".pid"
}

// HostDir is a per-host directory of the project as bin/start makes them
// (pid_<host>, log_<host>, tmp_<host>), host being the short host name.
func (p *Project) HostDir(kind, host string) string {
	return filepath.Join(p.Dir, kind+"_"+host)
}

// NativeApps are the apps rboinc's own assimilator daemons take (the
// `rboinc-server assimilator` entries of config.xml); All is set when one
// of them takes every app of rboinc's queues (no --app).
type NativeApps struct {
	All  bool
	Apps map[string]bool
}

// Covers reports whether app is taken by rboinc's assimilator daemon.
func (n NativeApps) Covers(app string) bool { return n.All || n.Apps[app] }

// NativeAssimilatorApps reads which apps rboinc's assimilator daemons take.
func (p *Project) NativeAssimilatorApps() NativeApps {
	n := NativeApps{Apps: map[string]bool{}}
	for _, d := range p.DaemonEntries {
		if d.Disabled {
			continue
		}
		apps, ok := NativeAssimilatorArgs(d.Cmd)
		if !ok {
			continue
		}
		if len(apps) == 0 {
			n.All = true
		}
		for _, a := range apps {
			n.Apps[a] = true
		}
	}
	return n
}

// NativeAssimilatorArgs tells whether cmd runs rboinc's assimilator
// (`rboinc-server assimilator ...`, or the project's bin/rboinc_assimilator
// wrapper) and with which --app values.
func NativeAssimilatorArgs(cmd string) (apps []string, ok bool) {
	f := strings.Fields(cmd)
	switch {
	case len(f) >= 2 && filepath.Base(f[0]) == "rboinc-server" && f[1] == "assimilator":
		f = f[2:]
	case len(f) >= 1 && filepath.Base(f[0]) == "rboinc_assimilator":
		f = f[1:]
	default:
		return nil, false
	}
	for i := 0; i < len(f); i++ {
		a := strings.TrimLeft(f[i], "-")
		if v, found := strings.CutPrefix(a, "app="); found {
			apps = append(apps, v)
		} else if a == "app" && i+1 < len(f) {
			apps = append(apps, f[i+1])
			i++
		}
	}
	return apps, true
}
