package e2e

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// boincdaemon PROJECT LOCKNAME: plays a daemon that BOINC's bin/start
// runs, until the script ends: a POSIX lock (lockf, as bin/start takes
// it) on PROJECT/pid_<short host name>/LOCKNAME.
func cmdBoincDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: boincdaemon PROJECT LOCKNAME")
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	dir := filepath.Join(ts.MkAbs(args[0]), "pid_"+host)
	ts.Check(os.MkdirAll(dir, 0o755))
	f, err := os.OpenFile(filepath.Join(dir, args[1]), os.O_RDWR|os.O_CREATE, 0o664)
	ts.Check(err)
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	ts.Check(unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk))
	ts.Defer(func() { f.Close() })
}
