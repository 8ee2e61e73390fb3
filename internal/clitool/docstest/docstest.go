// Package docstest checks, for the tests of each rboinc command, the
// manual page and the bash, zsh and fish completions clitool generates
// from the command's own flag definitions: every visible flag and
// subcommand is in each, the shells find no error in the scripts (bash
// also completes a flag from its prefix, and fish too when installed), and
// the manual page renders. A shell or formatter that is not installed is
// skipped with a message saying so. CheckPages holds the README's and
// docs/' example command lines to the same definitions. Imported by tests
// only.
package docstest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/urfave/cli/v2"
)

// word is a visible flag name (without dashes) or subcommand of an app.
type word struct {
	name string
	flag bool
}

// words are the visible flags (every name) and subcommands of app, each
// one to find in its documents.
func words(app *cli.App) []word {
	var out []word
	flags := func(fs []cli.Flag) {
		for _, f := range fs {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				continue
			}
			for _, n := range f.Names() {
				out = append(out, word{n, true})
			}
		}
	}
	var cmds func(cs []*cli.Command)
	cmds = func(cs []*cli.Command) {
		for _, c := range cs {
			if c.Hidden || c.Name == "help" {
				continue
			}
			out = append(out, word{name: c.Name})
			flags(c.Flags)
			cmds(c.Subcommands)
		}
	}
	flags(app.Flags)
	cmds(app.Commands)
	return out
}

// in tells whether w is in a document of kind (a shell, or "man"), as
// that document writes it.
func (w word) in(doc, kind string, single bool) bool {
	if !w.flag {
		return containsWord(doc, w.name, true)
	}
	dashes := "--"
	if single || len(w.name) == 1 {
		dashes = "-"
	}
	switch kind {
	case "fish":
		return containsWord(doc, "-l "+w.name, true) || containsWord(doc, "-o "+w.name, true) || containsWord(doc, "-s "+w.name, true)
	case "man":
		// Every option with two dashes (one for a letter), after a font
		// change such as \fB.
		if len(w.name) == 1 {
			return containsWord(doc, "-"+w.name, false)
		}
		return containsWord(doc, "--"+w.name, false)
	}
	return containsWord(doc, dashes+w.name, true)
}

func (w word) String() string { return w.name }

// Check generates app's completions and manual page and checks them (see
// the package comment). single: the program's flags take one dash. probe
// is a flag prefix that completes to exactly want (e.g. "-gr", "-group").
func Check(t *testing.T, app *cli.App, single bool, probe, want string) {
	t.Helper()
	dir := t.TempDir()
	words := words(app)
	if len(words) == 0 {
		t.Fatal("no flags to check")
	}
	for _, shell := range clitool.Shells {
		var b bytes.Buffer
		if err := clitool.WriteCompletion(&b, app, shell, single); err != nil {
			t.Fatalf("%s completion: %v", shell, err)
		}
		script := b.String()
		for _, w := range words {
			// Whole words only: -name must not pass for -app_name.
			if !w.in(script, shell, single) {
				t.Errorf("the %s completion of %s lacks %s", shell, app.Name, w)
			}
		}
		path := filepath.Join(dir, app.Name+"."+shell)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		syntax := map[string][]string{"bash": {"bash", "-n", path}, "zsh": {"zsh", "-n", path}, "fish": {"fish", "--no-execute", path}}[shell]
		if !installed(t, syntax[0], "its completion script is not checked") {
			continue
		}
		if out, err := exec.Command(syntax[0], syntax[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s finds the completion of %s broken: %v\n%s", shell, app.Name, err, out)
			continue
		}
		if got, ok := complete(t, shell, path, app.Name, probe); ok && strings.Join(got, " ") != want {
			t.Errorf("%s completes %q of %s to %q, want %q", shell, probe, app.Name, got, want)
		}
	}
	var man bytes.Buffer
	if err := clitool.WriteMan(&man, app); err != nil {
		t.Fatal(err)
	}
	page := man.String()
	if !strings.Contains(page, ".TH "+app.Name+" 1") {
		t.Errorf("the manual page of %s is not in section 1:\n%.200s", app.Name, page)
	}
	for _, w := range words {
		if !w.in(page, "man", single) {
			t.Errorf("the manual page of %s lacks %s", app.Name, w)
		}
	}
	path := filepath.Join(dir, app.Name+".1")
	if err := os.WriteFile(path, man.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if installed(t, "groff", "the manual page is not rendered") {
		out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", path).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff warns about the manual page of %s: %v\n%s", app.Name, err, out)
		}
	}
	if installed(t, "man", "man -l is not tried") {
		cmd := exec.Command("man", "-l", path)
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100")
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), app.Name) {
			t.Errorf("man -l %s: %v\n%.300s", app.Name, err, out)
		}
	}
}

// complete asks shell, with the script at path loaded, what it completes
// "prog probe" to; ok false when this shell cannot be asked here.
func complete(t *testing.T, shell, path, prog, probe string) ([]string, bool) {
	var cmd *exec.Cmd
	switch shell {
	case "bash":
		cmd = exec.Command("bash", "-c", `source "$1"; COMP_WORDS=("$2" "$3"); COMP_CWORD=1; COMP_LINE="$2 $3"; COMP_POINT=${#COMP_LINE}; `+
			`f=$(complete -p "$2" | sed -n 's/.*-F \([^ ]*\) .*/\1/p'); "$f" "$2" "$3" "$2"; printf '%s\n' "${COMPREPLY[@]}"`, "bash", path, prog, probe)
	case "fish":
		cmd = exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C"$argv[2] $argv[3]"`, path, prog, probe)
	default:
		return nil, false // zsh completes only inside its line editor
	}
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("%s completing %q: %v", shell, probe, err)
		return nil, false
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if w, _, _ := strings.Cut(line, "\t"); w != "" {
			got = append(got, w)
		}
	}
	return got, true
}

func installed(t *testing.T, prog, what string) bool {
	if _, err := exec.LookPath(prog); err != nil {
		t.Logf("%s is not installed: %s", prog, what)
		return false
	}
	return true
}

// containsWord tells whether w occurs in s with no letter, digit, _ or -
// after it, nor before it when left.
func containsWord(s, w string, left bool) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (!left || j == 0 || !wordByte(s[j-1])) && (end == len(s) || !wordByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || b == '-' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
