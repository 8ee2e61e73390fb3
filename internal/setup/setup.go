package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc"
	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/secretfile"
	"github.com/rboinc/rboinc/internal/standin"
	"github.com/rboinc/rboinc/internal/store"
)

// Options say what to set up.
type Options struct {
	Root         string // server root
	BoincProject string // a real BOINC project; empty: the embedded stand-in at Root/boinc
	URLBase      string // how clients reach the server, for the stand-in's download_url
	Exe          string // the running rboinc-server binary
	// Assimilator is "hook" or "native" (see engine.Config.Assimilator);
	// empty keeps what the root has (a new root: "hook").
	Assimilator string
	// BoincDB is where a new stand-in keeps BOINC's database
	// (sqldb.ParseURL's forms); empty: its SQLite file.
	BoincDB string
	// StateDB puts rboinc's own state in MariaDB (engine.Config.StateDB);
	// empty keeps what the root has (a new root: the SQLite file).
	StateDB string
	// Create is how work units enter BOINC, "create_work" or "native"
	// (engine.Config.Create); empty keeps what the root has (a new root:
	// create_work).
	Create string
}

// Report says what Init did and what the administrator still has to do.
type Report struct {
	Root      string
	Project   string
	Simulated bool
	// Daemons are the script_assimilator entries the project's rboinc
	// applications need in config.xml (real projects only).
	Daemons []DaemonLine
	Notes   []string
}

// CheckChoices refuses an unknown --assimilator or --create of init (empty:
// keep what the root has).
func CheckChoices(assimilator, create string) error {
	switch assimilator {
	case "", AssimHook, AssimNative:
	default:
		return fmt.Errorf("--assimilator %q: use %s (BOINC's script_assimilator and rboinc's hook) or %s (rboinc's own assimilator daemon)", assimilator, AssimHook, AssimNative)
	}
	if err := engine.CheckCreate(create); err != nil {
		return fmt.Errorf("--create: %w", err)
	}
	return nil
}

// Init creates or completes a server root. It is idempotent.
func Init(ctx context.Context, o Options) (Report, error) {
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return Report{}, err
	}
	if strings.ContainsAny(root, "'\n") {
		return Report{}, fmt.Errorf("server root %q: quotes and newlines are not allowed in the path", root)
	}
	if err := engine.CheckStateDB(o.StateDB); err != nil {
		return Report{}, fmt.Errorf("--state-db: %w", err)
	}
	// A mistyped choice is refused before anything is written.
	if err := CheckChoices(o.Assimilator, o.Create); err != nil {
		return Report{}, err
	}
	// The root holds secrets (the state database, rboinc.json's
	// passwords): other users of the host have no business in it.
	if err := os.MkdirAll(root, secretfile.RootMode); err != nil {
		return Report{}, fmt.Errorf("creating the server root: %w", err)
	}
	for _, d := range []string{"pool", "dav", "dav-lock", "results", "etc", "bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return Report{}, fmt.Errorf("creating the server root: %w", err)
		}
	}
	cfg, err := engine.LoadConfig(root)
	fresh := errors.Is(err, fs.ErrNotExist) || (err != nil && errors.Is(errors.Unwrap(err), fs.ErrNotExist))
	if err != nil && !fresh {
		if _, statErr := os.Stat(filepath.Join(root, engine.ConfigFile)); statErr == nil {
			return Report{}, err
		}
		fresh = true
	}
	if fresh {
		cfg = engine.DefaultConfig()
	}
	if o.StateDB != "" && !fresh && o.StateDB != cfg.StateDB {
		where := filepath.Join(root, engine.StateFile)
		if cfg.StateDB != "" {
			where = store.Describe(cfg.StateDB)
		}
		return Report{}, fmt.Errorf("server root %s keeps its state in %s already: `rboinc-server migrate --root %s --to-file FILE` moves it (init would leave it behind)", root, where, root)
	}
	if o.StateDB != "" {
		cfg.StateDB = o.StateDB
	}
	rep := Report{Root: root}
	proj := o.BoincProject
	if proj == "" {
		if !fresh && !cfg.Simulated {
			proj = cfg.BoincProject
		} else {
			proj = filepath.Join(root, "boinc")
			cfg.Simulated = true
		}
	} else {
		cfg.Simulated = false
	}
	if proj, err = filepath.Abs(proj); err != nil {
		return rep, err
	}
	if !fresh && cfg.BoincProject != "" && cfg.BoincProject != proj {
		return rep, fmt.Errorf("server root %s already serves BOINC project %s, not %s", root, cfg.BoincProject, proj)
	}
	cfg.BoincProject = proj
	rep.Project, rep.Simulated = proj, cfg.Simulated
	if o.Assimilator != "" {
		cfg.Assimilator = o.Assimilator
	}
	if o.Create != "" {
		cfg.Create = o.Create
	}
	if cfg.Assimilator == AssimNative && strings.ContainsAny(root, " \t\"") {
		return rep, fmt.Errorf("server root %q: the native assimilator's daemon line cannot name a path with spaces or quotes", root)
	}
	if o.BoincDB != "" && !cfg.Simulated {
		return rep, fmt.Errorf("--boinc-db is for the embedded stand-in; a real project's database is the one its config.xml names")
	}

	exe, err := InstallExe(root, o.Exe)
	if err != nil {
		return rep, err
	}
	if cfg.Simulated {
		if err := standin.InitProject(proj, standin.InitOptions{ServerExe: exe, URLBase: o.URLBase, HookScript: cfg.HookScript, DBURL: o.BoincDB}); err != nil {
			return rep, fmt.Errorf("creating the BOINC stand-in at %s: %w", proj, err)
		}
		native := ""
		if cfg.Assimilator == AssimNative {
			native = StandinAssimilatorCmd(root)
		}
		if err := standin.SetNativeAssimilator(proj, native, NativeDaemonName); err != nil {
			return rep, err
		}
		if err := installExample(root, proj); err != nil {
			return rep, err
		}
	}
	pc := CheckProject(proj, !cfg.Simulated)
	if err := pc.Findings.Err(); err != nil {
		return rep, fmt.Errorf("the BOINC project %s is not ready for rboinc; fix this and run init again:\n%w", proj, err)
	}
	linkCheck(&pc.Findings, root, pc.Project.DownloadDir)
	if !cfg.Simulated {
		ownerCheck(&pc.Findings, root, pc.Project)
	}
	for _, x := range pc.Findings {
		if x.Severity == Note {
			rep.Notes = append(rep.Notes, x.Msg)
		}
	}
	if err := installHook(proj, cfg.HookScript, exe, root); err != nil {
		return rep, err
	}
	if err := installDaemonScripts(proj, exe, root); err != nil {
		return rep, err
	}
	if err := installServerLink(proj, exe); err != nil {
		return rep, err
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	cfgPath := filepath.Join(root, engine.ConfigFile)
	mode := secretfile.Mode
	old, err := os.Stat(cfgPath)
	if err == nil {
		mode = secretfile.ModeFrom(old.Mode())
	} else {
		old = nil
	}
	if err := atomicfile.Write(cfgPath, append(data, '\n'), mode); err != nil {
		return rep, err
	}
	if err := secretfile.OwnLikeDir(cfgPath, old); err != nil {
		return rep, err
	}
	mig, err := store.Migrate(ctx, cfg.StateLocation(root))
	if err != nil {
		return rep, err
	}
	if err := SecureRoot(root, cfg); err != nil {
		return rep, err
	}
	if len(mig.Applied) > 0 && (mig.From > 0 || mig.Adopted) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the state database was upgraded from schema version %d to %d", mig.From, mig.To))
	}
	if !cfg.Simulated && cfg.Assimilator == AssimNative {
		rep.Daemons = []DaemonLine{NativeDaemonLine(root, pc.Project, pc.Queues)}
		rep.Notes = append(rep.Notes, "the native assimilator replaces the script_assimilator lines of rboinc's applications: remove those")
		rep.Daemons = append(rep.Daemons, DaemonLine{Line: NotifierLine(), Present: HasNotifier(pc.Project)})
	} else if !cfg.Simulated {
		rep.Daemons = DaemonLines(pc.Project, pc.Queues, cfg.HookScript)
		if len(rep.Daemons) == 0 {
			rep.Daemons = []DaemonLine{{App: "APP", Line: DaemonLineFor("APP", cfg.HookScript)}}
			rep.Notes = append(rep.Notes, "no rboinc queue yet: add one such daemon per BOINC application (the application= of each rboinc_<queue>_wu template); `rboinc-server doctor` prints the exact lines once the templates are there")
		}
		// Optional, for throughput: without it each hook call creates its
		// chain's next step itself.
		rep.Daemons = append(rep.Daemons, DaemonLine{Line: CreatorLine(), Present: HasCreator(pc.Project)},
			DaemonLine{Line: NotifierLine(), Present: HasNotifier(pc.Project)})
	}
	return rep, nil
}

// InstallExe copies the running binary into root/bin, so the hook and the
// stand-in's create_work keep working whatever happens to the build tree.
func InstallExe(root, exe string) (string, error) {
	dst := filepath.Join(root, "bin", "rboinc-server")
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", err
		}
	}
	if a, err := os.Stat(exe); err == nil {
		if b, err := os.Stat(dst); err == nil && os.SameFile(a, b) {
			return dst, nil
		}
	}
	if _, _, err := atomicfile.Copy(exe, dst, 0o755); err != nil {
		return "", fmt.Errorf("installing the server binary into %s: %w", dst, err)
	}
	if err := installHookExe(root, exe); err != nil {
		return "", err
	}
	return dst, nil
}

// HookExe is the small hook program (cmd/rboinc-hook), installed beside
// rboinc-server when it was built beside it.
const HookExe = "rboinc-hook"

// installHookExe copies rboinc-hook from beside exe into root/bin. Without
// it the hook runs `rboinc-server process` (the same work, a slower start).
func installHookExe(root, exe string) error {
	src := filepath.Join(filepath.Dir(exe), HookExe)
	dst := filepath.Join(root, "bin", HookExe)
	a, err := os.Stat(src)
	if err != nil {
		return nil
	}
	if b, err := os.Stat(dst); err == nil && os.SameFile(a, b) {
		return nil
	}
	if _, _, err := atomicfile.Copy(src, dst, 0o755); err != nil {
		return fmt.Errorf("installing the hook program into %s: %w", dst, err)
	}
	return nil
}

// installHook installs bin/<hook> in the project, which BOINC's
// script_assimilator runs as ../bin/<hook> from tmp_<host>: a symbolic link
// to rboinc-hook (it finds the server root from its own location, and no
// shell starts per call), or, without rboinc-hook, a two-line sh wrapper
// that runs `rboinc-server process` with the server root.
func installHook(proj, name, exe, root string) error {
	dst := filepath.Join(proj, "bin", name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if target := hookLinkTarget(exe); target != "" {
		tmp := dst + ".rboinc-new"
		os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			return fmt.Errorf("installing the hook %s: %w", dst, err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("installing the hook %s: %w", dst, err)
		}
		return nil
	}
	return atomicfile.Write(dst, []byte(hookScript(name, exe, root)), 0o755)
}

// hookLinkTarget is the rboinc-hook installed beside exe, or "".
func hookLinkTarget(exe string) string {
	if hook := filepath.Join(filepath.Dir(exe), HookExe); fileExists(hook) {
		return hook
	}
	return ""
}

// hookScript is the sh wrapper's text; Init refuses quotes in the paths.
func hookScript(name, exe, root string) string {
	return "#!/bin/sh\n# rboinc assimilator hook: called by script_assimilator (--script " + name + ").\nexec '" + exe + "' process --root '" + root + "' \"$@\"\n"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// installDaemonScripts writes bin/rboinc_creator and bin/rboinc_notifier
// in the project, which BOINC's bin/start runs as daemons when config.xml
// lists them.
func installDaemonScripts(proj, exe, root string) error {
	for _, d := range []struct{ cmd, sub, what string }{
		{CreatorCmd, "creator", "creates the next steps of chains in batches"},
		{NotifierCmd, "notifier", "sends the notifications of chain events"},
	} {
		if err := atomicfile.Write(filepath.Join(proj, "bin", d.cmd), []byte(daemonScript(d.cmd, d.sub, d.what, exe, root)), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// daemonScript is the sh wrapper of one daemon; Init refuses quotes in
// the paths. exec keeps the pid bin/start wrote into pid_<host>/.
func daemonScript(cmd, sub, what, exe, root string) string {
	return "#!/bin/sh\n# " + strings.Replace(cmd, "_", " ", 1) + ": a BOINC daemon that " + what + ".\nexec '" + exe + "' " + sub + " --root '" + root + "' \"$@\"\n"
}

// installExample puts the shipped example queue into a fresh stand-in:
// its templates, its app and its server default files, leaving anything
// already there alone.
func installExample(root, proj string) error {
	put := func(src, dst string, perm os.FileMode) error {
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		data, err := rboinc.Examples.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return atomicfile.Write(dst, data, perm)
	}
	tmpls, err := fs.Glob(rboinc.Examples, "templates/rboinc_*")
	if err != nil {
		return err
	}
	for _, t := range tmpls {
		if err := put(t, filepath.Join(proj, "templates", path.Base(t)), 0o644); err != nil {
			return err
		}
	}
	if err := put("examples/langevin/run", filepath.Join(proj, "apps", "langevin", "run"), 0o755); err != nil {
		return err
	}
	defs, _ := fs.Glob(rboinc.Examples, "examples/langevin/default_*")
	for _, d := range defs {
		if err := put(d, filepath.Join(root, "etc", path.Base(d)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
