package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The Apache deployment: rboinc-server as a CGI program and the scratch
// area served by mod_dav, configured by the shipped
// examples/apache/rboinc.conf, with the stand-in's volunteer loop running
// beside it as its own process.

const (
	modeStandalone = "standalone"
	modeApache     = "apache"
)

// apache2 is Debian's Apache binary and the directory of its modules.
var (
	apacheBin     = "/usr/sbin/apache2"
	apacheModules = "/usr/lib/apache2/modules"
)

// apacheMissing says why the Apache variant cannot run here, or "".
func apacheMissing() string {
	if _, err := os.Stat(apacheBin); err != nil {
		return "apache2 is not installed (apt-get install apache2): the Apache CGI + mod_dav deployment is not tested"
	}
	for _, m := range apacheModuleList {
		if _, err := os.Stat(filepath.Join(apacheModules, "mod_"+m+".so")); err != nil {
			return "Apache module mod_" + m + " is missing in " + apacheModules
		}
	}
	return ""
}

var apacheModuleList = []string{"mpm_event", "authn_core", "authz_core", "auth_basic", "authn_file", "authz_user", "alias", "cgid", "dav", "dav_fs", "env"}

// serverCred is whom the server side runs as in the Apache variant. Apache
// refuses to serve as root, so a test run as root (CI) runs Apache, the
// volunteer loop, the hook and the administration commands as an ordinary
// user (rboincadm, or RBOINC_E2E_APACHE_USER) who owns the server root; a
// test run as anyone else runs everything as that user. nil: as ourselves.
func serverCred(ts *testscript.TestScript) *syscall.Credential {
	if ts.Getenv("RBOINC_E2E_MODE") != modeApache || os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(apacheUser())
	ts.Check(err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// asServer makes cmd run as the server side's user.
func asServer(ts *testscript.TestScript, cmd *exec.Cmd) *exec.Cmd {
	if c := serverCred(ts); c != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c}
	}
	return cmd
}

// ownByServer gives paths to the server side's user (when that is not us),
// so files a script puts into the server root can be removed by it later.
func ownByServer(ts *testscript.TestScript, paths ...string) {
	c := serverCred(ts)
	if c == nil {
		return
	}
	for _, p := range paths {
		ts.Check(os.Chown(p, int(c.Uid), int(c.Gid)))
	}
}

// prepareApache lets the server side's user reach and own the server
// root: testscript's directories are private to us.
// apacheUser is who runs Apache (and rboinc) when the test runs as root:
// the project's owner, as BOINC's Apache set-up has it, a user that is not
// www-data (RBOINC_E2E_APACHE_USER names another).
func apacheUser() string {
	if name := os.Getenv("RBOINC_E2E_APACHE_USER"); name != "" {
		return name
	}
	return "rboincadm"
}

func prepareApache(env *testscript.Env, root string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, d := range []string{filepath.Dir(env.WorkDir), env.WorkDir, binDir} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{filepath.Dir(filepath.Dir(env.WorkDir)), filepath.Dir(binDir)} {
		for ; d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("the Apache variant runs the server as another user, who cannot enter %s: set TMPDIR to a directory everyone may enter (e.g. /tmp)", d)
			}
		}
	}
	name := apacheUser()
	u, err := apacheAccount(name)
	if err != nil {
		return fmt.Errorf("the Apache variant runs the server as %s when the test runs as root: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range []string{root, filepath.Join(env.WorkDir, "apache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.Chown(d, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// apacheAccount looks the Apache user up, creating it (once per test
// process) when it is missing. The scripts' set-ups run in parallel, and
// two useradd runs at once can leave /etc/passwd holding a uid that a
// lookup saw in between no more: seen as Apache, started under the stale
// uid, unable to write its own directory.
func apacheAccount(name string) (*user.User, error) {
	apacheUserOnce.Do(func() {
		if _, err := user.Lookup(name); err == nil || os.Getenv("RBOINC_E2E_APACHE_USER") != "" {
			return
		}
		// As a BOINC project's owner would: a user of its own, not www-data.
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			apacheUserErr = fmt.Errorf("creating the user %s that runs Apache in the test: %v: %s", name, err, out)
		}
	})
	if apacheUserErr != nil {
		return nil, apacheUserErr
	}
	return user.Lookup(name)
}

var (
	apacheUserOnce sync.Once
	apacheUserErr  error
)

// serveApache starts Apache with the CGI + mod_dav configuration on a free
// loopback port, and the stand-in's volunteer loop; both stop with the
// script. The server log is Apache's error log, shared with the volunteer.
func serveApache(ts *testscript.TestScript, root string) {
	work := ts.Getenv("WORK")
	dir := filepath.Join(work, "apache")
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(debianLockDir(filepath.Join(dir, "lock")))
	example, err := os.ReadFile(filepath.Join(repoDir, "examples", "apache", "rboinc.conf"))
	ts.Check(err)
	// A copy: the repository may sit where the server's user cannot read.
	ts.Check(os.WriteFile(filepath.Join(dir, "rboinc.conf"), example, 0o644))
	logPath := filepath.Join(work, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	ts.Check(err)
	ts.Defer(func() { logf.Close() })
	ownByServer(ts, logPath)

	var base string
	for attempt := 0; ; attempt++ {
		port := freePort(ts)
		conf := filepath.Join(dir, "httpd.conf")
		ts.Check(os.WriteFile(conf, []byte(apacheConf(dir, root, logPath, port)), 0o644))
		cmd := asServer(ts, exec.Command(apacheBin, "-f", conf, "-DFOREGROUND"))
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/bin", "LANG=C", "RBOINC_LOG_LEVEL=" + ts.Getenv("RBOINC_LOG_LEVEL")}
		cmd.Stdout, cmd.Stderr = logf, logf
		ts.Check(cmd.Start())
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		base = "http://127.0.0.1:" + strconv.Itoa(port)
		if waitUp(base+"/rboinc_cgi", done) {
			ts.Defer(func() { stop(cmd, done, syscall.SIGTERM) })
			break
		}
		stop(cmd, done, syscall.SIGTERM)
		if attempt == 2 {
			log, _ := os.ReadFile(logPath)
			ts.Fatalf("Apache did not start:\n%s", log)
		}
	}

	vol := asServer(ts, exec.Command(filepath.Join(binDir, "rboinc-server"), "volunteer", "--root", root))
	vol.Env = envOf(ts)
	vol.Stdout, vol.Stderr = logf, logf
	ts.Check(vol.Start())
	vdone := make(chan struct{})
	go func() { vol.Wait(); close(vdone) }()
	ts.Defer(func() { stop(vol, vdone, os.Interrupt) })
	ts.Setenv("RBOINC_URL", base+"/rboinc_cgi")
}

// apacheConf is a whole Apache configuration of our own (no system files):
// what a Debian site has enabled, then the shipped rboinc.conf.
func apacheConf(dir, root, logPath string, port int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ServerRoot %q\nServerName 127.0.0.1\nListen 127.0.0.1:%d\n", dir, port)
	fmt.Fprintf(&b, "PidFile %q\nErrorLog %q\nLogLevel warn\nMutex file:%s default\n", filepath.Join(dir, "httpd.pid"), logPath, dir)
	for _, m := range apacheModuleList {
		fmt.Fprintf(&b, "LoadModule %s_module %s\n", m, filepath.Join(apacheModules, "mod_"+m+".so"))
	}
	fmt.Fprintf(&b, "ScriptSock %q\n", filepath.Join(dir, "cgid.sock"))
	// Debian's default lock database, in a directory of www-data's, as
	// mods-enabled/dav_fs.conf sets it before conf-enabled/rboinc.conf.
	fmt.Fprintf(&b, "Define APACHE_LOCK_DIR %s\n", filepath.Join(dir, "lock"))
	if _, err := os.Stat(debianDAVFS); err == nil {
		fmt.Fprintf(&b, "Include %q\n", debianDAVFS)
	} else {
		b.WriteString("DAVLockDB ${APACHE_LOCK_DIR}/DAVLock\n")
	}
	b.WriteString("StartServers 1\nMaxRequestWorkers 50\nThreadsPerChild 25\nServerLimit 2\n")
	b.WriteString("PassEnv RBOINC_LOG_LEVEL\n")
	fmt.Fprintf(&b, "Define RBOINC_ROOT %s\nInclude %q\n", root, filepath.Join(dir, "rboinc.conf"))
	return b.String()
}

// debianDAVFS is Debian's configuration of mod_dav_fs.
const debianDAVFS = "/etc/apache2/mods-available/dav_fs.conf"

// debianLockDir makes dir as Debian's /var/lock/apache2 is: www-data's.
func debianLockDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return os.Chmod(dir, 0o555) // not ours to write, as www-data's is not
	}
	u, err := user.Lookup("www-data")
	if err != nil {
		return os.Chmod(dir, 0o555)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

func freePort(ts *testscript.TestScript) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitUp polls the liveness URL until it answers 200, the process exits,
// or 15 seconds pass.
func waitUp(url string, done <-chan struct{}) bool {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-done:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}

// stop signals a process we started and waits for it, killing it after
// ten seconds.
func stop(cmd *exec.Cmd, done <-chan struct{}, sig os.Signal) {
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
