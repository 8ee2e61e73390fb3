package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// rbbigfile FILE BYTES: writes a file of about BYTES bytes of coordinate
// lines, too large to travel inside a submission (it goes by WebDAV PUT).
func cmdBigFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rbbigfile FILE BYTES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	line := "1.0 2.0 3.0\n"
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Repeat(line, n/len(line)+1)), 0o644))
}

// rbadmin ARGS...: runs rboinc-server ARGS as the server root's owner (in
// the Apache variant under root, the user Apache runs as), as an
// administrator must; its output is the command's stdout and stderr.
func cmdAdmin(ts *testscript.TestScript, neg bool, args []string) {
	cmd := asServer(ts, exec.Command(filepath.Join(binDir, "rboinc-server"), args...))
	cmd.Env = envOf(ts)
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	err := cmd.Run()
	if (err != nil) != neg {
		ts.Fatalf("rboinc-server %s: %v", strings.Join(args, " "), err)
	}
}

// rbconfigset CONFIG.XML TAG VALUE: sets <TAG>VALUE</TAG> in the <config>
// of a BOINC config.xml, in place (the file keeps its owner), as an
// administrator edits it on a running project.
func cmdConfigSet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: rbconfigset CONFIG.XML TAG VALUE")
	}
	path := ts.MkAbs(args[0])
	b, err := os.ReadFile(path)
	ts.Check(err)
	s, elem := string(b), "<"+args[1]+">"+args[2]+"</"+args[1]+">"
	if i := strings.Index(s, "<"+args[1]+">"); i >= 0 {
		j := strings.Index(s[i:], "</"+args[1]+">")
		s = s[:i] + elem + s[i+j+len(args[1])+3:]
	} else {
		s = strings.Replace(s, "<config>", "<config>\n    "+elem, 1)
	}
	ts.Check(os.WriteFile(path, []byte(s), 0o644))
}

// rbstripurl: RBOINC_URL without its /rboinc_cgi path, as a user might
// write it.
func cmdStripURL(ts *testscript.TestScript, neg bool, args []string) {
	ts.Setenv("RBOINC_URL", strings.TrimSuffix(ts.Getenv("RBOINC_URL"), "/rboinc_cgi"))
}

// rbjsonset KEY VALUE: sets a top-level setting of $ROOT/rboinc.json (a
// JSON number, a JSON list [...] or object {...}, or a string), as an administrator edits it; a root not
// made yet is made first, as rbserve makes it.
func cmdJSONSet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rbjsonset KEY VALUE")
	}
	ensureInit(ts)
	path := filepath.Join(ts.Getenv("ROOT"), "rboinc.json")
	b, err := os.ReadFile(path)
	ts.Check(err)
	var cfg map[string]any
	ts.Check(json.Unmarshal(b, &cfg))
	var v any = args[1]
	if f, err := strconv.ParseFloat(args[1], 64); err == nil {
		v = f
	} else if strings.HasPrefix(args[1], "[") || strings.HasPrefix(args[1], "{") {
		ts.Check(json.Unmarshal([]byte(args[1]), &v))
	}
	cfg[args[0]] = v
	out, err := json.MarshalIndent(cfg, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(path, append(out, '\n'), 0o644))
}
