package e2e

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/testbin"
)

// binDir holds the built commands, examples the example app, repoDir the
// repository.
var binDir, examples, repoDir string

func TestMain(m *testing.M) {
	flag.Parse()
	longtest.AtLeastAtOnce(scriptsAtOnce)
	dir, err := os.MkdirTemp("", "rboinc-e2e-bin")
	if err != nil {
		panic(err)
	}
	binDir = dir
	// The commands come from the run's shared build, linked into a
	// directory of this process's own (the scripts' masters are built
	// into it too).
	if err := os.Chmod(binDir, 0o755); err != nil {
		panic(err)
	}
	built, err := testbin.Build(testbin.Server, testbin.Hook, testbin.Submit, testbin.Retrieve, testbin.GAHP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the commands:", err)
		os.Exit(1)
	}
	for _, name := range []string{"rboinc-server", "rboinc-hook", "rboinc-submit", "rboinc-retrieve", "rboinc-gahp"} {
		if err := linkFile(filepath.Join(built, name), filepath.Join(binDir, name)); err != nil {
			fmt.Fprintln(os.Stderr, "linking the commands:", err)
			os.Exit(1)
		}
	}
	examples, _ = filepath.Abs("../examples/langevin")
	repoDir, _ = filepath.Abs("..")
	code := m.Run()
	os.RemoveAll(dir)
	mariadbtest.StopShared()
	os.Exit(code)
}

// scriptsAtOnce is how many scripts run at once unless go test's
// -parallel says otherwise: a script mostly waits on its servers (six
// scripts took 50 s two at a time, 36 s six at a time, for the same CPU
// time), and the default, one per CPU, left a 2-core machine half idle.
const scriptsAtOnce = 6

// linkFile makes dst the file src: a hard link, or a symbolic one
// across file systems.
func linkFile(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	return os.Symlink(src, dst)
}

// noteSources stats every Go file of the commands and the library: the
// commands are built by a child process, which go test does not watch, and
// a cached result must not outlive a change to them (go test keys its
// cache on the files the test process itself looks at once m.Run has
// begun: the tests call it, not TestMain).
func noteSources(repo string) {
	for _, top := range []string{"cmd", "workflow", "internal", "examples", "templates"} {
		filepath.WalkDir(filepath.Join(repo, top), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				os.Stat(p)
			}
			return nil
		})
	}
	os.Stat(filepath.Join(repo, "go.mod"))
	os.Stat(filepath.Join(repo, "go.sum"))
}

// TestScripts runs every script against both deployments: the standalone
// server, and Apache running rboinc-server as CGI with mod_dav. The runs
// under Apache and on MariaDB are the long matrix (longtest).
func TestScripts(t *testing.T) {
	noteSources(repoDir)
	t.Run(modeStandalone, func(t *testing.T) { runScripts(t, modeStandalone, "") })
	t.Run(modeApache, func(t *testing.T) {
		longtest.Skip(t, "every script under Apache")
		if why := apacheMissing(); why != "" {
			t.Skip(why)
		}
		runScripts(t, modeApache, "")
	})
	// The standalone deployment again with both databases in a MariaDB
	// server: the stand-in's BOINC database, and rboinc's own state
	// (rboinc.json's state_db, used by every command, the server, the hook
	// and the creator). Every query rboinc and the stand-in make runs on
	// both engines. One run for both (each in a database of its own on the
	// shared server): the two were separate runs of every script, which
	// proved each engine pairing no better than this one and the SQLite
	// runs above do, for a whole run of the scripts' processor time more.
	t.Run(variantMariaDB, func(t *testing.T) {
		longtest.Skip(t, "every script with the BOINC database and rboinc's state in MariaDB")
		mariadbtest.Shared(t)
		runScripts(t, modeStandalone, variantMariaDB, func(env *testscript.Env) {
			env.Setenv("BOINC_DB_URL", "mysql://"+mariadbtest.NewDB(t))
			env.Setenv("STATE_DB_URL", "mysql://"+mariadbtest.NewDB(t))
		})
	})
}

// variantMariaDB is the run of the scripts with both databases in
// MariaDB; a script that reads state.db itself skips it with the
// condition condStateMaria ([statemaria] skip).
const (
	variantMariaDB = "mariadb"
	condStateMaria = "statemaria"
)

func runScripts(t *testing.T, mode, variant string, more ...func(*testscript.Env)) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Values[scriptTKey{}] = env.T()
			for _, f := range more {
				f(env)
			}
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("EXAMPLES", examples)
			root := filepath.Join(env.WorkDir, "root")
			env.Setenv("ROOT", root)
			env.Setenv("RBOINC_LOG_LEVEL", "WARN")
			env.Setenv("RBOINC_E2E_MODE", mode)
			if mode == modeApache {
				return prepareApache(env, root)
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case modeApache, modeStandalone:
				return cond == mode, nil
			case condStateMaria:
				return variant == variantMariaDB, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rbserve":     cmdServe,
			"rbuser":      cmdUser,
			"waitstatus":  cmdWaitStatus,
			"waitidle":    cmdWaitIdle,
			"rbfiles":     cmdFiles,
			"rbhook":      cmdHook,
			"rbwucount":   cmdWUCount,
			"rblitmus":    cmdLitmus,
			"boincdaemon": cmdBoincDaemon,
			"rbbigfile":   cmdBigFile,
			"rbadmin":     cmdAdmin,
			"rbconfigset": cmdConfigSet,
			"rbmariadb":   cmdMariaDB,
			"rbstaterows": cmdStateRows,
			"rbstripurl":  cmdStripURL,
			"rbsql":       cmdSQL,
			"rbexit":      cmdExit,
			"rbjsonset":   cmdJSONSet,
			"gahp":        cmdGahp,
			"rbcount":     cmdCount,
			"rbget":       cmdGet,
			"rbresultlog": cmdResultLog,
			"rbconsumed":  cmdConsumed,
			"rbmasters":   cmdMasters,
			"rbsmtp":      cmdSMTP,
			"rbmailcode":  cmdMailCode,
		},
	})
}

// rbserve [INIT-OPTION...]: init $ROOT (embedded stand-in, with the
// options given, its BOINC database at $BOINC_DB_URL when set) and run
// `rboinc-server serve` on a free loopback port until the script ends (in
// the Apache variant: Apache with rboinc-server as CGI and mod_dav, and the
// stand-in's volunteer loop); sets RBOINC_URL.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	root := ts.Getenv("ROOT")
	ensureInit(ts, args...)
	if ts.Getenv("RBOINC_E2E_MODE") == modeApache {
		serveApache(ts, root)
		return
	}
	addr := filepath.Join(ts.Getenv("WORK"), ".addr")
	os.Remove(addr)
	logf, err := os.Create(filepath.Join(ts.Getenv("WORK"), "server.log"))
	ts.Check(err)
	cmd := exec.Command(filepath.Join(binDir, "rboinc-server"), "serve", "--root", root, "--listen", "127.0.0.1:0", "--addr-file", addr)
	cmd.Env = envOf(ts)
	cmd.Stdout, cmd.Stderr = logf, logf
	ts.Check(cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	ts.Defer(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		logf.Close()
	})
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile(addr); err == nil && len(b) > 0 {
			ts.Setenv("RBOINC_URL", "http://"+strings.TrimSpace(string(b))+"/rboinc_cgi")
			return
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logf.Name())
			ts.Fatalf("server exited: %s", log)
		case <-time.After(50 * time.Millisecond):
		}
	}
	ts.Fatalf("server did not start")
}

// ensureInit makes $ROOT a server root (embedded stand-in, with the init
// options given, its BOINC database at $BOINC_DB_URL when set) unless it
// is one already.
func ensureInit(ts *testscript.TestScript, args ...string) {
	root := ts.Getenv("ROOT")
	if _, err := os.Stat(filepath.Join(root, "rboinc.json")); err == nil {
		return
	}
	// The shared build's programs in root/bin already: init copies none.
	// Not where the server runs as another user (Apache's variant as
	// root): there the root's files are that user's, and the links would
	// be ours (doctor says so).
	if serverCred(ts) == nil {
		testbin.Preinstall(root, filepath.Join(binDir, "rboinc-server"))
	}
	initArgs := append([]string{"init", "--root", root}, args...)
	// The addresses hold passwords: through the environment, never on
	// the command line (init refuses them there).
	cmd := asServer(ts, exec.Command(filepath.Join(binDir, "rboinc-server"), initArgs...))
	cmd.Env = envOf(ts)
	if u := ts.Getenv("BOINC_DB_URL"); u != "" {
		cmd.Env = append(cmd.Env, "RBOINC_BOINC_DB="+u)
	}
	if u := ts.Getenv("STATE_DB_URL"); u != "" {
		cmd.Env = append(cmd.Env, "RBOINC_STATE_DB="+u)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		ts.Fatalf("rboinc-server %v: %v\n%s", initArgs, err, out)
	}
}

// rbuser NAME: add a user and make its token RBOINC_TOKEN (and TOKEN_NAME).
func cmdUser(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: rbuser NAME")
	}
	out, err := asServer(ts, exec.Command(filepath.Join(binDir, "rboinc-server"), "user", "add", "--root", ts.Getenv("ROOT"), args[0])).Output()
	ts.Check(err)
	tok := strings.TrimSpace(string(out))
	if strings.Count(string(out), "\n") != 1 || len(tok) < 32 {
		ts.Fatalf("user add printed %q, want the token alone on one line", out)
	}
	ts.Setenv("RBOINC_TOKEN", tok)
	ts.Setenv("TOKEN_"+strings.ToUpper(args[0]), tok)
}

// waitstatus GROUP NAME STATE [SECONDS]: poll `rboinc-retrieve -status`
// until the chain's line shows STATE.
func cmdWaitStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: waitstatus GROUP NAME STATE [SECONDS]")
	}
	limit := 60 * time.Second
	if len(args) > 3 {
		s, err := strconv.Atoi(args[3])
		ts.Check(err)
		limit = time.Duration(s) * time.Second
	}
	deadline := time.Now().Add(limit)
	var last string
	for look := 0; time.Now().Before(deadline); look++ {
		cmd := exec.Command(filepath.Join(binDir, "rboinc-retrieve"), "-group", args[0], "-status")
		cmd.Env = envOf(ts)
		out, _ := cmd.CombinedOutput()
		last = string(out)
		sc := bufio.NewScanner(strings.NewReader(last))
		for sc.Scan() {
			f := strings.Split(sc.Text(), "\t")
			if len(f) >= 3 && f[0] == args[1] && f[2] == args[2] {
				return
			}
		}
		time.Sleep(statusPause(look))
	}
	log, _ := os.ReadFile(filepath.Join(ts.Getenv("WORK"), "server.log"))
	ts.Fatalf("chain %s/%s not %s after %v; last status:\n%s\nserver log:\n%s", args[0], args[1], args[2], limit, last, log)
}

// waitidle [SECONDS]: wait until the BOINC stand-in has nothing left to
// compute or assimilate.
func cmdWaitIdle(ts *testscript.TestScript, neg bool, args []string) {
	limit := 60 * time.Second
	if len(args) > 0 {
		s, err := strconv.Atoi(args[0])
		ts.Check(err)
		limit = time.Duration(s) * time.Second
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if idle, err := standinIdle(filepath.Join(ts.Getenv("ROOT"), "boinc")); err == nil && idle {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("BOINC stand-in not idle after %v", limit)
}

// rbfiles DIR REGEXP N: DIR holds exactly N entries matching REGEXP.
func cmdFiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: rbfiles DIR REGEXP N")
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	ents, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	re := mustRE(ts, args[1])
	n := 0
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if re.MatchString(e.Name()) {
			n++
		}
	}
	if (n == want) == neg {
		ts.Fatalf("%s: %d entries match %s, want %d; entries: %v", args[0], n, args[1], want, names)
	}
}

func runCmd(ts *testscript.TestScript, name string, args ...string) error {
	cmd := asServer(ts, exec.Command(filepath.Join(binDir, name), args...))
	cmd.Env = envOf(ts)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return nil
}

func envOf(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "RBOINC_URL", "RBOINC_TOKEN", "RBOINC_LOG_LEVEL", "TMPDIR", "RBOINC_RETRIES"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}
