package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// runSites are the places allowed to start a program, each with why no
// request data can reach its command line. A new place fails the test
// until it is reviewed and added here.
var runSites = map[string]string{
	"internal/testbin/testbin.go:Build": "go build of the module's own commands for the tests, into a directory named by the source hash; package paths are constants of the tests, no request data",
	"internal/boinc/createworkrun.go:StartCreateWork": "create_work --stdin at <project>/bin/create_work, fed job lines while a submission is recorded; " +
		"argv built from typed, validated work parameters; each job line is checked (Add) before it is written to stdin",
	"internal/engine/defaults.go:encode": "the encoder named in rboinc.json by the administrator; argv is two pool paths and the configured code",
	"cmd/rboinc-hook/main.go:handOver": "the hook program replaces itself with the rboinc-server installed beside it; argv is `process --root ROOT`, " +
		"the spool entry name it made, and its own arguments from BOINC's script_assimilator, which rboinc-server parses as the hook always did",
	"internal/standin/compute.go:runApp": "the stand-in's volunteer runs apps/<app>/run; app is a validated name from the templates, argv fixed",
	"internal/setup/doctor.go:checkExe":  "`rboinc-server doctor` (administrator) runs the server binary installed in the root with the fixed argument --help",
	"cmd/rboinc-server/docs.go:siblingDoc": "`rboinc-server install-docs` (administrator) runs rboinc-submit and rboinc-retrieve, found beside it or on PATH, " +
		"with the fixed arguments --man or --completion bash|zsh|fish",
	"internal/standin/daemons.go:runDaemon": "the stand-in runs rboinc's own daemons from config.xml as bin/start does (program rboinc-server or rboinc_*, " +
		"found in the project's bin/), with the words of their <cmd>, which the administrator (or init) wrote; no request data reaches config.xml",
	"internal/standin/assimilate.go:assimilate": "the stand-in reproduces script_assimilator, which runs the hook through system(); the command line is " +
		"the configured hook name plus WU ids and paths the stand-in created",
}

// shellSites may run a shell: only the stand-in's emulation of BOINC's own
// script_assimilator, which must do exactly what BOINC does.
var shellSites = map[string]bool{"internal/standin/assimilate.go": true}

// toolDirs hold developer tools that are not part of the served program
// (benchmarks, the soak): like tests, they may use test support.
var toolDirs = []string{"bench/"}

// testSupport are the directories of packages only tests import, which
// may run shells: docstest has bash, zsh and fish check and run the
// completion scripts the commands generate, on files the test wrote;
// mariadbtest starts a private MariaDB server for the tests of BOINC's
// database.
// TestNoShell holds them to that: no non-test file of the module imports
// one (or a package below one), none is a command (package main), and the
// exception is the directory itself, not its subdirectories, which are
// checked as production code.
var testSupport = []string{"internal/clitool/docstest", "internal/mariadbtest", "internal/standinserver"}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "csh": true, "tcsh": true, "fish": true,
	"/bin/sh": true, "/bin/bash": true, "/usr/bin/sh": true, "/usr/bin/bash": true, "/usr/bin/env": true, "env": true,
	"cmd": true, "cmd.exe": true, "powershell": true, "pwsh": true, "busybox": true}

// TestNoShell walks every non-test Go file of the module and finds every
// way of starting a program (os/exec Command and CommandContext, os
// StartProcess, syscall Exec and ForkExec). None may name a shell or pass
// "-c" (except the stand-in's script_assimilator), and each must be a
// reviewed site.
func TestNoShell(t *testing.T) {
	root := moduleRoot(t)
	module := modulePath(t, root)
	seen := map[string]bool{}
	supportSeen := map[string]bool{}
	files := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "testdata" || (strings.HasPrefix(n, ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		files++
		pkgName, imps := imports(t, p)
		if dir := path.Dir(rel); slices.Contains(testSupport, dir) {
			supportSeen[dir] = true
			if pkgName == "main" {
				t.Errorf("%s: %s is a test-support package, which may run shells, and cannot be a command", rel, dir)
			}
			return nil
		}
		for _, imp := range imps {
			if dir, ok := testSupportImport(module, imp); ok && !isTool(rel) {
				t.Errorf("%s imports %s, which only tests may import (test support in %s may run shells)", rel, imp, dir)
			}
		}
		for _, site := range runCalls(t, p) {
			key := rel + ":" + site.fn
			seen[key] = true
			if site.shell && !shellSites[rel] {
				t.Errorf("%s:%d (%s) runs a shell (%s): run programs with an argument vector", rel, site.line, site.fn, site.why)
			}
			if isTool(rel) {
				continue
			}
			if _, ok := runSites[key]; !ok {
				t.Errorf("%s:%d: %s starts a program at a site not reviewed: make sure no request data can reach its program or arguments unchecked, then add %q to runSites", rel, site.line, site.fn, key)
			}
		}
		return nil
	})
	if files < 50 {
		t.Fatalf("scanned only %d files under %s", files, root)
	}
	var stale []string
	for k := range runSites {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	for _, dir := range testSupport {
		if !supportSeen[dir] {
			t.Errorf("testSupport lists %s, which has no Go file: remove it", dir)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("runSites lists %s, which no longer starts a program: remove it", k)
	}
}

// testSupportImport tells whether the import path imp is a test-support
// package of module, or a package below one, and which.
func testSupportImport(module, imp string) (string, bool) {
	for _, dir := range testSupport {
		pkg := module + "/" + dir
		if imp == pkg || strings.HasPrefix(imp, pkg+"/") {
			return dir, true
		}
	}
	return "", false
}

// imports are the package name and the import paths of one file.
func imports(t *testing.T, path string) (string, []string) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return f.Name.Name, out
}

// modulePath is the module path go.mod in root declares.
func modulePath(t *testing.T, root string) string {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	t.Fatal("no module line in go.mod")
	return ""
}

func isTool(rel string) bool {
	for _, d := range toolDirs {
		if strings.HasPrefix(rel, d) {
			return true
		}
	}
	return false
}

type runCall struct {
	fn    string // enclosing function
	line  int
	shell bool
	why   string
}

// runCalls finds the program-starting calls in one file.
func runCalls(t *testing.T, path string) []runCall {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	// Local names of the packages that start programs.
	names := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != "os/exec" && p != "os" && p != "syscall" && p != "golang.org/x/sys/unix" {
			continue
		}
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = p
	}
	starters := map[string]map[string]int{ // package -> function -> index of the program argument
		"os/exec":               {"Command": 0, "CommandContext": 1},
		"os":                    {"StartProcess": 0},
		"syscall":               {"Exec": 0, "ForkExec": 0, "StartProcess": 0},
		"golang.org/x/sys/unix": {"Exec": 0},
	}
	var out []runCall
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			pkg, ok := names[id.Name]
			if !ok {
				return true
			}
			progArg, ok := starters[pkg][sel.Sel.Name]
			if !ok {
				return true
			}
			rc := runCall{fn: fd.Name.Name, line: fset.Position(call.Pos()).Line}
			for i, a := range call.Args {
				lit, ok := a.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				s, _ := strconv.Unquote(lit.Value)
				if i == progArg && shells[s] {
					rc.shell, rc.why = true, "program "+s
				}
				if s == "-c" || s == "/c" {
					rc.shell, rc.why = true, "argument "+s
				}
			}
			out = append(out, rc)
			return true
		})
	}
	return out
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// TestRunCallsFindsShells makes sure the check itself catches the forms it
// is meant to.
func TestRunCallsFindsShells(t *testing.T) {
	src := `package x
import (
	ex "os/exec"
	"syscall"
)
func a(u string) { ex.Command("sh", "-c", u).Run() }
func b(u string) { ex.CommandContext(nil, "/bin/bash", "-c", u) }
func c(u string) { ex.Command("/usr/bin/env", "sh", u) }
func d(u string) { syscall.Exec("/bin/sh", []string{"sh"}, nil) }
func e(u string) { ex.Command("/opt/tool", u) }
`
	p := filepath.Join(t.TempDir(), "x.go")
	os.WriteFile(p, []byte(src), 0o644)
	got := runCalls(t, p)
	want := map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": false}
	if len(got) != len(want) {
		t.Fatalf("found %d calls: %+v", len(got), got)
	}
	for _, c := range got {
		if c.shell != want[c.fn] {
			t.Errorf("%s: shell=%v", c.fn, c.shell)
		}
	}
}

// TestTestSupportImport: importing a test-support package, or a package
// below one, is recognised; a package whose name only starts the same is
// not.
func TestTestSupportImport(t *testing.T) {
	const m = "example.org/mod"
	for imp, want := range map[string]bool{
		m + "/internal/clitool/docstest":       true,
		m + "/internal/clitool/docstest/inner": true,
		m + "/internal/clitool/docstest2":      false,
		m + "/internal/clitool":                false,
		"other.org/internal/clitool/docstest":  false,
	} {
		if _, got := testSupportImport(m, imp); got != want {
			t.Errorf("%s: %v, want %v", imp, got, want)
		}
	}
}
