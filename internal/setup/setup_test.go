package setup

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rboinc/rboinc"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
)

var langevinDaemon = DaemonLineFor("langevin", "rboinc_hook")

// fakeProject makes a BOINC-shaped project directory, as make_project
// leaves it, with the example rboinc templates; daemons are extra
// <daemon><cmd> lines for config.xml.
func fakeProject(t *testing.T, dir string, daemons ...string) string {
	t.Helper()
	for _, d := range []string{"bin", "cgi-bin", "templates", "download", "upload", "apps"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ds := "<daemon><cmd>feeder -d 3</cmd></daemon>\n<daemon><cmd>transitioner -d 3</cmd></daemon>\n"
	for _, d := range daemons {
		ds += "<daemon><cmd>" + d + "</cmd></daemon>\n"
	}
	cfg := `<?xml version="1.0" ?>
<boinc>
  <config>
    <uldl_dir_fanout>1024</uldl_dir_fanout>
    <download_dir>` + dir + `/download</download_dir>
    <upload_dir>` + dir + `/upload</upload_dir>
    <download_url>http://127.0.0.1/rbtest/download</download_url>
    <host>vm</host>
  </config>
  <daemons>
` + ds + `  </daemons>
</boinc>
`
	write(t, filepath.Join(dir, "config.xml"), cfg, 0o644)
	write(t, filepath.Join(dir, "bin", "create_work"), "#!/bin/sh\nexit 0\n", 0o755)
	tmpls, _ := fs.Glob(rboinc.Examples, "templates/rboinc_*")
	for _, src := range tmpls {
		b, err := rboinc.Examples.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "templates", path.Base(src)), string(b), 0o644)
	}
	return dir
}

func write(t *testing.T, p, s string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

// stubExe stands for rboinc-server: it answers --help.
func stubExe(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "rboinc-server")
	write(t, p, "#!/bin/sh\nexit 0\n", 0o755)
	return p
}

func initReal(t *testing.T, proj string) (string, Report) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	rep, err := Init(context.Background(), Options{Root: root, BoincProject: proj, Exe: stubExe(t)})
	if err != nil {
		t.Fatal(err)
	}
	return root, rep
}

func TestInitRealProjectPrintsDaemonAndInstallsHook(t *testing.T) {
	proj := fakeProject(t, t.TempDir())
	root, rep := initReal(t, proj)
	if rep.Simulated {
		t.Fatal("a real project reported as simulated")
	}
	if len(rep.Daemons) != 3 || rep.Daemons[0].Line != langevinDaemon || rep.Daemons[0].Present ||
		rep.Daemons[1].Line != CreatorLine() || rep.Daemons[1].Present ||
		rep.Daemons[2].Line != NotifierLine() || rep.Daemons[2].Present {
		t.Fatalf("daemons = %+v, want %s, the creator and the notifier, all missing", rep.Daemons, langevinDaemon)
	}
	for cmd, sub := range map[string]string{CreatorCmd: "creator", NotifierCmd: "notifier"} {
		w, err := os.ReadFile(filepath.Join(proj, "bin", cmd))
		if err != nil || !strings.Contains(string(w), "exec '") || !strings.Contains(string(w), "' "+sub+" --root '"+root+"' \"$@\"") {
			t.Fatalf("%s wrapper: %s %v", cmd, w, err)
		}
	}
	hook, err := os.ReadFile(filepath.Join(proj, "bin", "rboinc_hook"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hook), "process --root '"+root+"'") {
		t.Fatalf("hook does not serve %s:\n%s", root, hook)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "script_assimilator is missing") {
		t.Errorf("no note about the missing script_assimilator: %q", rep.Notes)
	}
	// With the daemon in config.xml, init says it is there.
	proj2 := fakeProject(t, t.TempDir(), "script_assimilator -d 3 --app langevin --script rboinc_hook", CreatorCmd, NotifierCmd)
	_, rep = initReal(t, proj2)
	if len(rep.Daemons) != 3 || !rep.Daemons[0].Present || !rep.Daemons[1].Present || !rep.Daemons[2].Present {
		t.Fatalf("daemons = %+v, want langevin, the creator and the notifier present", rep.Daemons)
	}
}

func TestInitRefusesUnfitProjects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(proj string)
		want  string
	}{
		{"no config.xml", func(p string) { os.Remove(filepath.Join(p, "config.xml")) }, "config.xml"},
		{"no create_work", func(p string) { os.Remove(filepath.Join(p, "bin", "create_work")) }, "bin/create_work is missing"},
		{"create_work not executable", func(p string) { os.Chmod(filepath.Join(p, "bin", "create_work"), 0o644) }, "not executable"},
		{"no download dir", func(p string) { os.RemoveAll(filepath.Join(p, "download")) }, "download directory"},
		{"no templates dir", func(p string) { os.RemoveAll(filepath.Join(p, "templates")) }, "templates directory"},
		{"bad template", func(p string) {
			os.WriteFile(filepath.Join(p, "templates", "rboinc_bad_wu"), []byte("<file_info>"), 0o644)
			os.WriteFile(filepath.Join(p, "templates", "rboinc_bad_result"), []byte("<x/>"), 0o644)
		}, "bad rboinc template"},
		{"fanout changed", func(p string) { os.MkdirAll(filepath.Join(p, "download", "7ff0"), 0o755) }, "uldl_dir_fanout=1024 cannot produce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := fakeProject(t, t.TempDir())
			tc.spoil(proj)
			_, err := Init(context.Background(), Options{Root: filepath.Join(t.TempDir(), "root"), BoincProject: proj, Exe: stubExe(t)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(proj, "bin", "rboinc_hook")); err == nil {
				t.Error("the hook was installed into an unfit project")
			}
		})
	}
}

func TestInitSaysInputsAreCopiedAcrossFileSystems(t *testing.T) {
	other := "/dev/shm"
	var a, b syscall.Stat_t
	tmp := t.TempDir()
	if syscall.Stat(other, &a) != nil || syscall.Stat(tmp, &b) != nil || a.Dev == b.Dev {
		t.Skip("needs /dev/shm on another file system than the temporary directory")
	}
	projDir, err := os.MkdirTemp(other, "rboinc-proj")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(projDir) })
	_, rep := initReal(t, fakeProject(t, projDir))
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "COPIED") {
		t.Fatalf("no note that inputs are copied: %q", rep.Notes)
	}
}

func TestDaemonLinesSeeTokenForm(t *testing.T) {
	proj := fakeProject(t, t.TempDir(), `script_assimilator -d 3 --app langevin --script "rboinc_hook wu_name files2 batch_id"`)
	pc := CheckProject(proj, true)
	ds := DaemonLines(pc.Project, pc.Queues, "rboinc_hook")
	if len(ds) != 1 || ds[0].Present || !strings.Contains(ds[0].Conflict, "token form") {
		t.Fatalf("%+v", ds)
	}
}

func problems(f Findings) string {
	var s []string
	for _, x := range f.Problems() {
		s = append(s, x.Msg)
	}
	return strings.Join(s, "\n")
}

func TestDoctor(t *testing.T) {
	ctx := context.Background()
	proj := fakeProject(t, t.TempDir())
	root, _ := initReal(t, proj)

	p := problems(Doctor(ctx, root))
	if !strings.Contains(p, "no script_assimilator for BOINC application langevin") || !strings.Contains(p, langevinDaemon) {
		t.Fatalf("doctor did not ask for the daemon line:\n%s", p)
	}
	cfg, _ := os.ReadFile(filepath.Join(proj, "config.xml"))
	fixed := strings.Replace(string(cfg), "</daemons>", langevinDaemon+"\n</daemons>", 1)
	write(t, filepath.Join(proj, "config.xml"), fixed, 0o644)
	// In config.xml, but BOINC does not run it (bin/start was not run, or
	// a failing hook made it exit).
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "script_assimilator of BOINC application langevin is not running") ||
		!strings.Contains(p, "bin/start --cron") || !strings.Contains(p, "rboinc_assimilator_langevin.log") {
		t.Fatalf("doctor did not see the assimilator is not running:\n%s", p)
	}
	stop := runDaemon(t, proj, "rboinc_assimilator_langevin.log.lock")
	if p := problems(Doctor(ctx, root)); p != "" {
		t.Fatalf("problems in a complete installation:\n%s", p)
	}
	// bin/stop leaves stop_daemons behind.
	write(t, filepath.Join(proj, "stop_daemons"), "<stop/>\n", 0o644)
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "BOINC's daemons are stopped") || !strings.Contains(p, "run bin/start") {
		t.Fatalf("doctor did not see stop_daemons:\n%s", p)
	}
	os.Remove(filepath.Join(proj, "stop_daemons"))
	stop()
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "is not running") {
		t.Fatalf("doctor did not see the assimilator exit:\n%s", p)
	}
	stop = runDaemon(t, proj, "rboinc_assimilator_langevin.log.lock")
	defer stop()

	// A hook of another root, a stray password line, a missing binary.
	hook := filepath.Join(proj, "bin", "rboinc_hook")
	good, _ := os.ReadFile(hook)
	write(t, hook, strings.ReplaceAll(string(good), root, "/srv/other"), 0o755)
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "serves another server root (/srv/other)") {
		t.Fatalf("doctor missed the foreign hook:\n%s", p)
	}
	write(t, hook, string(good), 0o755)

	if err := SetDAVPassword(root, "mallory", "x"); err != nil {
		t.Fatal(err)
	}
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "mallory, who are not rboinc users") {
		t.Fatalf("doctor missed a stray dav.htpasswd line:\n%s", p)
	}
	RemoveDAVUser(root, "mallory")

	db, err := store.Open(ctx, filepath.Join(root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.AddUser(ctx, "alice", "hash")
	db.Close()
	f := Doctor(ctx, root)
	if p := problems(f); p != "" {
		t.Fatalf("a user without a DAV password is no problem:\n%s", p)
	}
	if !strings.Contains(notes(f), "alice have no line in dav.htpasswd") {
		t.Fatalf("no note about alice's missing DAV password:\n%s", notes(f))
	}

	if os.Geteuid() == 0 {
		if err := os.Chown(filepath.Join(root, "rboinc.json"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if p := problems(Doctor(ctx, root)); !strings.Contains(p, "rboinc.json (") || !strings.Contains(p, "chown -R") {
			t.Fatalf("doctor missed a file of another owner:\n%s", p)
		}
		os.Chown(filepath.Join(root, "rboinc.json"), 0, 0)
	}

	os.Remove(filepath.Join(root, "bin", "rboinc-server"))
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "server binary") {
		t.Fatalf("doctor missed the missing binary:\n%s", p)
	}
}

func notes(f Findings) string {
	var s []string
	for _, x := range f {
		if x.Severity == Note {
			s = append(s, x.Msg)
		}
	}
	return strings.Join(s, "\n")
}

func TestDoctorStandinVolunteer(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	if _, err := Init(ctx, Options{Root: root, Exe: stubExe(t)}); err != nil {
		t.Fatal(err)
	}
	f := Doctor(ctx, root)
	if p := problems(f); p != "" {
		t.Fatalf("problems in a fresh stand-in:\n%s", p)
	}
	if !strings.Contains(notes(f), "volunteer loop is not running") {
		t.Fatalf("no note about the idle volunteer loop:\n%s", notes(f))
	}
	// A volunteer holds the project's lock.
	lock, err := os.OpenFile(filepath.Join(root, "boinc", "standin.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	held, err := flockHeld(lock.Name())
	if err != nil || !held {
		t.Fatalf("flockHeld = %v, %v with the lock held", held, err)
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if held, _ := flockHeld(lock.Name()); held {
		t.Fatal("flockHeld after unlocking")
	}
}

func TestDAVPasswd(t *testing.T) {
	root := t.TempDir()
	if got := davHash("abc"); got != "{SHA}qZk+NkcGgWq6PiVxeFDCbJzQ2J0=" {
		t.Fatalf("davHash(abc) = %s", got)
	}
	for _, step := range []struct{ user, tok string }{{"bob", "t1"}, {"alice", "t2"}, {"bob", "t3"}} {
		if err := SetDAVPassword(root, step.user, step.tok); err != nil {
			t.Fatal(err)
		}
	}
	if !CheckDAVPassword(root, "alice", "t2") || !CheckDAVPassword(root, "bob", "t3") || CheckDAVPassword(root, "bob", "t1") {
		t.Fatal("passwords not as last set")
	}
	data, _ := os.ReadFile(filepath.Join(root, DAVPasswdFile))
	if strings.Count(string(data), "\n") != 2 || !strings.HasPrefix(string(data), "alice:{SHA}") {
		t.Fatalf("dav.htpasswd:\n%s", data)
	}
	if fi, _ := os.Stat(filepath.Join(root, DAVPasswdFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := SetDAVPassword(root, "../x", "t"); err == nil {
		t.Error("a bad user name was accepted")
	}
	// Apache's own tool agrees, where installed (apache2-utils).
	if htpasswd, err := exec.LookPath("htpasswd"); err == nil {
		if out, err := exec.Command(htpasswd, "-vb", filepath.Join(root, DAVPasswdFile), "bob", "t3").CombinedOutput(); err != nil {
			t.Fatalf("htpasswd -v rejects bob's token: %v %s", err, out)
		}
		if err := exec.Command(htpasswd, "-vb", filepath.Join(root, DAVPasswdFile), "bob", "t1").Run(); err == nil {
			t.Fatal("htpasswd -v accepts bob's old token")
		}
	}
	if err := RemoveDAVUser(root, "bob"); err != nil {
		t.Fatal(err)
	}
	if CheckDAVPassword(root, "bob", "t3") {
		t.Fatal("bob still let in")
	}
}

func FuzzParseHtpasswd(f *testing.F) {
	f.Add([]byte("alice:{SHA}qZk+NkcGgWq6PiVxeFDCbJzQ2J0=\n# comment\n\nbob:$apr1$x$y\n"))
	f.Add([]byte(":\n:x\nno colon\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for u, h := range parseHtpasswd(data) {
			if u == "" || strings.ContainsAny(u, "\n:") || strings.Contains(h, "\n") {
				t.Fatalf("bad entry %q:%q", u, h)
			}
		}
	})
}

func TestCheckSpool(t *testing.T) {
	root := t.TempDir()
	var f Findings
	checkSpool(&f, root)
	if len(f) != 0 {
		t.Fatalf("no spool yet: %+v", f)
	}
	dir := filepath.Join(root, engine.SpoolDirName)
	os.MkdirAll(filepath.Join(dir, ".bad-1-x"), 0o755)
	os.MkdirAll(filepath.Join(dir, "2-y"), 0o755)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "2-y"), old, old)
	os.MkdirAll(filepath.Join(dir, "3-z"), 0o755) // fresh: fine
	checkSpool(&f, root)
	if len(f) != 2 || f[0].Severity != Problem || !strings.Contains(f[0].Msg, "set aside") ||
		f[1].Severity != Problem || !strings.Contains(f[1].Msg, "1 hook call has waited") {
		t.Fatalf("findings %+v", f)
	}
}

// With rboinc-hook built beside the server, init installs the project's hook
// as a link to the root's copy of it, and doctor checks the link's target.
func TestHookLinkedToHookProgram(t *testing.T) {
	exe := stubExe(t)
	write(t, filepath.Join(filepath.Dir(exe), HookExe), "#!/bin/sh\nexit 0\n", 0o755)
	proj := fakeProject(t, t.TempDir())
	root := filepath.Join(t.TempDir(), "root")
	if _, err := Init(context.Background(), Options{Root: root, BoincProject: proj, Exe: exe}); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(proj, "bin", "rboinc_hook")
	target, err := os.Readlink(hook)
	if err != nil || target != filepath.Join(root, "bin", HookExe) {
		t.Fatalf("hook link -> %q, %v", target, err)
	}
	p, _ := boinc.LoadProject(proj)
	installed := filepath.Join(root, "bin", "rboinc-server")
	var f Findings
	checkHook(&f, p, "rboinc_hook", installed, root)
	if len(f) != 1 || f[0].Severity != OK {
		t.Fatalf("findings %+v", f)
	}
	// A link into another root's bin/ is that root's hook.
	os.Remove(hook)
	os.Symlink("/srv/other/bin/"+HookExe, hook)
	f = nil
	checkHook(&f, p, "rboinc_hook", installed, root)
	if len(f) != 1 || f[0].Severity != Problem || !strings.Contains(f[0].Msg, "another server root (/srv/other)") {
		t.Fatalf("findings %+v", f)
	}
}

// runDaemon plays a daemon that BOINC's bin/start runs: a POSIX lock
// (lockf) on its lock file in pid_<host>/, held until stop.
func runDaemon(t *testing.T, proj, lockName string) (stop func()) {
	t.Helper()
	dir := filepath.Join(proj, "pid_"+localHost())
	os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o664)
	if err != nil {
		t.Fatal(err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}
