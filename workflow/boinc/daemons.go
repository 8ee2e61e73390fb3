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
