package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Invocation is one command line of prog in a fenced block of the docs.
type Invocation struct {
	Page string // relative to the module root
	Line int
	Args []string // the words after prog, placeholders and brackets removed
}

// Pages are the documents whose examples readers copy: README.md and
// every docs/*.md, relative to root.
func Pages(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	for i, p := range pages {
		pages[i], _ = filepath.Rel(root, p)
	}
	return pages, nil
}

// ModuleRoot is the directory of go.mod above the working directory.
func ModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = up
	}
}

// Invocations finds every command line of prog inside the fenced code
// blocks of the pages (shell, cron, XML daemon lines alike): a line's
// pipeline pieces (|, ;, &&, $(...)) are looked at one by one, and a piece
// that names prog (as a word, or as the last element of a path) yields the
// words after it up to a comment.
func Invocations(root string, pages []string, prog string) ([]Invocation, error) {
	var out []Invocation
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		fenced := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if !fenced {
				continue
			}
			for _, piece := range pieces.Split(line, -1) {
				if args, ok := argsOf(piece, prog); ok {
					out = append(out, Invocation{Page: page, Line: i + 1, Args: args})
				}
			}
		}
	}
	return out, nil
}

// pieces separate the commands of one shell line, and the XML tags around
// a daemon's <cmd>.
var pieces = regexp.MustCompile(`\s+#\s|\|\|?|;|&&|[$<]\(|\)|<[^>]*>`)

func argsOf(piece, prog string) ([]string, bool) {
	words := strings.Fields(piece)
	for i, w := range words {
		if w != prog && !strings.HasSuffix(w, "/"+prog) {
			continue
		}
		var args []string
		for _, a := range words[i+1:] {
			if a == "#" {
				break
			}
			a = strings.Trim(a, "[]")
			if a == "" || a == "..." {
				continue
			}
			args = append(args, a)
		}
		return args, true
	}
	return nil, false
}

// CheckPages fails for every option the docs give prog (an app from the
// command's own definitions) that the command does not take: a flag not
// defined for the subcommand the line names (or for the app), or, with
// single (one-dash programs that accept any unambiguous prefix, as
// Getopt::Long did), no flag it abbreviates. extra are option names the
// program takes from elsewhere (a queue's parameters). It also fails when
// the docs hold no command line of prog at all, so that it cannot pass
// by finding nothing.
func CheckPages(t *testing.T, app *cli.App, prog string, single bool, extra ...string) {
	t.Helper()
	root := ModuleRoot(t)
	pages, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	invs, err := Invocations(root, pages, prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) == 0 {
		t.Fatalf("no command line of %s in %v", prog, pages)
	}
	for _, inv := range invs {
		if bad := unknownOption(app, inv.Args, single, extra); bad != "" {
			t.Errorf("%s:%d: %s does not take %s (line: %s %s)", inv.Page, inv.Line, prog, bad, prog, strings.Join(inv.Args, " "))
		}
	}
}

// unknownOption returns the first option of args that the app (and the
// subcommands args name) does not define, or "".
func unknownOption(app *cli.App, args []string, single bool, extra []string) string {
	flags := [][]cli.Flag{app.Flags}
	cmds := app.Commands
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || len(a) == 1 || strings.ContainsAny(a, "<>") || isNumber(a[1:]) {
			for _, c := range cmds {
				if c.HasName(a) {
					flags = append(flags, c.Flags)
					cmds = c.Subcommands
					break
				}
			}
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !takes(flags, name, single, extra) {
			return a
		}
	}
	return ""
}

func takes(flags [][]cli.Flag, name string, single bool, extra []string) bool {
	var names []string
	for _, fs := range flags {
		for _, f := range fs {
			names = append(names, f.Names()...)
		}
	}
	names = append(names, extra...)
	names = append(names, early...)
	matches := 0
	for _, n := range names {
		if n == name || (single && strings.EqualFold(n, name)) {
			return true
		}
		if single && strings.HasPrefix(strings.ToLower(n), strings.ToLower(name)) {
			matches++
		}
	}
	return matches == 1
}

// early are the options every program answers before its flags are
// parsed (clitool.Early: -version, -man, -completion) and the library's
// help.
var early = []string{"version", "man", "completion", "help", "h"}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// QueueParameters are the parameter names of the queues shipped in the
// module's templates/ (the options a queue adds to rboinc-submit, and to
// rboinc-retrieve -resume).
func QueueParameters(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(ModuleRoot(t), "templates", "rboinc_*_wu"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no queue templates in templates/: %v", err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range parameterName.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

var parameterName = regexp.MustCompile(`parameter_name="([^"]+)"`)
