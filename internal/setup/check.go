package setup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/templates"
)

// Severity grades a finding of the checks.
type Severity int

// Severities, mildest first.
const (
	OK      Severity = iota // checked and fine
	Note                    // works, but the administrator should know
	Problem                 // something will fail until fixed
)

func (s Severity) String() string {
	switch s {
	case OK:
		return "ok"
	case Note:
		return "note"
	}
	return "PROBLEM"
}

// Finding is one result of a check, worded for the administrator: what is
// wrong and what to do about it.
type Finding struct {
	Severity Severity
	Msg      string
}

// Findings collects the results of several checks.
type Findings []Finding

func (f *Findings) add(s Severity, format string, args ...any) {
	*f = append(*f, Finding{Severity: s, Msg: fmt.Sprintf(format, args...)})
}

// Problems returns the findings that are problems.
func (f Findings) Problems() Findings {
	var out Findings
	for _, x := range f {
		if x.Severity == Problem {
			out = append(out, x)
		}
	}
	return out
}

// Err joins the problems into one error, nil if there are none.
func (f Findings) Err() error {
	p := f.Problems()
	if len(p) == 0 {
		return nil
	}
	msgs := make([]string, len(p))
	for i, x := range p {
		msgs[i] = "- " + x.Msg
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// ProjectCheck is what checking a BOINC project found.
type ProjectCheck struct {
	Project  *boinc.Project // nil when config.xml could not be read
	Queues   []*templates.Queue
	Findings Findings
}

// CheckProject checks a BOINC project directory the way rboinc uses it:
// config.xml, the download and upload hierarchies and their fanout,
// bin/create_work and the rboinc templates. real adds what only a real
// project has (script_assimilator).
func CheckProject(dir string, real bool) ProjectCheck {
	var pc ProjectCheck
	f := &pc.Findings
	p, err := boinc.LoadProject(dir)
	if err != nil {
		f.add(Problem, "cannot use the BOINC project at %s: %v (is it the directory that holds config.xml, and readable by this user?)", dir, err)
		return pc
	}
	pc.Project = p
	f.add(OK, "BOINC project %s: config.xml read", p.Dir)

	checkDir := func(what, d string, mode uint32) bool {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			f.add(Problem, "the %s directory %s (from config.xml) is missing: %v", what, d, err)
		case !fi.IsDir():
			f.add(Problem, "the %s directory %s (from config.xml) is not a directory", what, d)
		case unix.Access(d, mode) != nil:
			f.add(Problem, "the %s directory %s is not %s by this user (uid %d): run rboinc as the project's owner, or fix its permissions", what, d, accessWords(mode), os.Geteuid())
		default:
			return true
		}
		return false
	}
	// rboinc writes inputs into download/ and reads outputs from upload/.
	if checkDir("download", p.DownloadDir, unix.R_OK|unix.W_OK|unix.X_OK) {
		checkFanout(f, "download", p.DownloadDir, p.Fanout)
	}
	if checkDir("upload", p.UploadDir, unix.R_OK|unix.X_OK) {
		checkFanout(f, "upload", p.UploadDir, p.Fanout)
	}
	if p.Fanout == 0 {
		f.add(Note, "config.xml sets no uldl_dir_fanout: files go flat into download/ and upload/, as BOINC then does too (make_project sets 1024)")
	} else {
		f.add(OK, "uldl_dir_fanout is %d", p.Fanout)
	}

	cw := filepath.Join(p.Dir, "bin", "create_work")
	if fi, err := os.Stat(cw); err != nil {
		f.add(Problem, "%s is missing: rboinc creates every work unit with it (a BOINC project made by make_project has it)", cw)
	} else if !fi.Mode().IsRegular() || unix.Access(cw, unix.X_OK) != nil {
		f.add(Problem, "%s is not executable by this user: chmod +x it, or run rboinc as the project's owner", cw)
	} else {
		f.add(OK, "bin/create_work is executable")
	}
	if real {
		if _, err := os.Stat(filepath.Join(p.Dir, "bin", "script_assimilator")); err != nil {
			f.add(Note, "%s is missing: the <daemon> entries rboinc needs run it (build BOINC's server with the assimilators, or copy it into bin/)", filepath.Join(p.Dir, "bin", "script_assimilator"))
		}
	}

	tdir := filepath.Join(p.Dir, "templates")
	if !checkDir("templates", tdir, unix.R_OK|unix.X_OK) {
		return pc
	}
	qs, errs := templates.NewRegistry(tdir).List()
	for _, err := range errs {
		f.add(Problem, "bad rboinc template: %v", err)
	}
	pc.Queues = qs
	if len(qs) == 0 && len(errs) == 0 {
		f.add(Note, "no application queue yet: add a template pair templates/rboinc_<queue>_wu and templates/rboinc_<queue>_result (see docs/admin.md, \"Application queues\")")
	}
	for _, q := range qs {
		f.add(OK, "queue %s (BOINC application %s): templates parse", q.Name, q.Application)
		origClientNotes(f, q)
	}
	return pc
}

func accessWords(mode uint32) string {
	if mode&unix.W_OK != 0 {
		return "writable"
	}
	return "readable"
}

// checkFanout looks for fan-out subdirectories that uldl_dir_fanout could
// not have made: a sign the fanout was changed after files were placed, so
// BOINC and rboinc would look for files in the wrong place.
func checkFanout(f *Findings, what, dir string, fanout int) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	// A flat hierarchy may hold very many files: look at a sample.
	ents, err := d.ReadDir(4096)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	var beyond []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		n, err := strconv.ParseUint(e.Name(), 16, 32)
		if err != nil || fanout <= 0 || int(n) < fanout {
			continue
		}
		beyond = append(beyond, e.Name())
	}
	if len(beyond) > 0 {
		sort.Strings(beyond)
		f.add(Problem, "%s/ has fan-out subdirectories %s that uldl_dir_fanout=%d cannot produce: was the fanout changed after files were placed? BOINC and rboinc would look for files in the wrong subdirectory", what, strings.Join(beyond[:min(len(beyond), 5)], ", "), fanout)
	}
}

// DaemonLine is the script_assimilator daemon one BOINC application needs.
type DaemonLine struct {
	App     string
	Line    string // the exact <daemon> element to put into config.xml
	Present bool   // config.xml has it already
	// Conflict, if set, explains why the script_assimilator config.xml has
	// for App will not work.
	Conflict string
}

// DaemonLines lists the daemon entries the queues' BOINC applications need,
// and whether config.xml has them. The --script value must be the hook's
// name alone: today's script_assimilator passes no arguments at all when it
// has more than one word.
func DaemonLines(p *boinc.Project, qs []*templates.Queue, hook string) []DaemonLine {
	seen := map[string]bool{}
	var out []DaemonLine
	for _, q := range qs {
		if seen[q.Application] {
			continue
		}
		seen[q.Application] = true
		d := DaemonLine{App: q.Application, Line: DaemonLineFor(q.Application, hook)}
		switch got := p.AssimilatorScript(q.Application); {
		case got == hook:
			d.Present = true
		case got == "":
		case len(strings.Fields(got)) > 1:
			d.Conflict = fmt.Sprintf("config.xml runs script_assimilator for %s with --script %q: today's script_assimilator passes the hook no arguments in this token form; use --script %s alone", q.Application, got, hook)
		default:
			d.Conflict = fmt.Sprintf("config.xml runs script_assimilator for %s with --script %s, not rboinc's hook %s: rboinc's chains of %s will not advance", q.Application, got, hook, q.Application)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].App < out[j].App })
	return out
}

// CreatorCmd is the wrapper in the project's bin/ that runs
// `rboinc-server creator` as a BOINC daemon.
const CreatorCmd = "rboinc_creator"

// CreatorLine is the config.xml entry that runs rboinc's creator.
func CreatorLine() string { return "<daemon><cmd>" + CreatorCmd + "</cmd></daemon>" }

// HasCreator tells whether config.xml runs rboinc's creator.
func HasCreator(p *boinc.Project) bool { return hasDaemon(p, CreatorCmd) }

// NotifierCmd is the wrapper in the project's bin/ that runs
// `rboinc-server notifier` as a BOINC daemon.
const NotifierCmd = "rboinc_notifier"

// NotifierLine is the config.xml entry that runs rboinc's notifier.
func NotifierLine() string { return "<daemon><cmd>" + NotifierCmd + "</cmd></daemon>" }

// HasNotifier tells whether config.xml runs rboinc's notifier.
func HasNotifier(p *boinc.Project) bool { return hasDaemon(p, NotifierCmd) }

// hasDaemon tells whether config.xml runs the program prog.
func hasDaemon(p *boinc.Project, prog string) bool {
	for _, cmd := range p.Daemons {
		if f := strings.Fields(cmd); len(f) > 0 && filepath.Base(f[0]) == prog {
			return true
		}
	}
	return false
}

// DaemonLineFor is the config.xml entry that runs rboinc's hook for app.
// Its own <output> and <pid_file> keep it apart from other
// script_assimilators: bin/start names a daemon's lock, pid and log files
// after its program otherwise, and starts only one of several that share
// them.
func DaemonLineFor(app, hook string) string {
	name := "rboinc_assimilator_" + app
	return "<daemon><cmd>script_assimilator -d 3 --app " + app + " --script " + hook + "</cmd><output>" + name + ".log</output><pid_file>" + name + ".pid</pid_file></daemon>"
}

// linkCheck tries what staging does: hard-link a file of the pool into the
// download directory. A failure is no error (staging then copies), but
// every input then takes its space twice.
func linkCheck(f *Findings, root, download string) {
	src, err := os.CreateTemp(filepath.Join(root, "pool"), ".linkcheck*")
	if err != nil {
		f.add(Problem, "cannot create a file in %s: %v", filepath.Join(root, "pool"), err)
		return
	}
	src.Close()
	defer os.Remove(src.Name())
	dst := filepath.Join(download, filepath.Base(src.Name()))
	err = os.Link(src.Name(), dst)
	if err == nil {
		os.Remove(dst)
		f.add(OK, "the content pool and %s are on one file system: inputs are hard-linked, not copied", download)
		return
	}
	switch {
	case errors.Is(err, syscall.EXDEV):
		f.add(Note, "the server root %s and the download directory %s are on different file systems: inputs will be COPIED into download/ instead of hard-linked (each input stored twice, staging slower). To avoid it, put the server root on the file system of %s", root, download, download)
	default:
		f.add(Note, "hard-linking from %s into %s fails (%v): inputs will be COPIED into download/ instead", filepath.Join(root, "pool"), download, err)
	}
}
