package audit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// importRule is a wall between layers: no package matching from imports a
// package matching deny, except the packages in except. Patterns are
// import paths, the module's own without the module path
// ("internal/store"); a trailing "/..." matches the path and everything
// below it. transitive also refuses an import through other packages of
// the module.
type importRule struct {
	name       string
	from       []string
	deny       []string
	except     []string
	transitive bool
}

// sqlDrivers are the database/sql drivers the module uses.
var sqlDrivers = []string{"modernc.org/sqlite/...", "github.com/go-sql-driver/mysql/..."}

// clientPackages are the programs and packages that talk to a server over
// HTTP only.
var clientPackages = []string{"workflow/client/...", "workflow/master/...", "cmd/rboinc-submit", "cmd/rboinc-retrieve", "cmd/rboinc-gahp", "internal/gahp/..."}

// importRules hold today: a change that breaks one fails TestImportRules.
var importRules = []importRule{
	{name: "the HTTP layer reads the state through the engine and the query API, not a database",
		from: []string{"internal/server", "internal/webstatus", "internal/metrics"},
		deny: append([]string{"database/sql", "internal/boincdb"}, sqlDrivers...)},
	{name: "the engine serves no HTTP",
		from: []string{"internal/engine"}, deny: []string{"net/http/httptest", "internal/server/...", "internal/webstatus/...", "internal/metrics/..."}},
	{name: "clients reach the server over HTTP only",
		from: clientPackages, transitive: true,
		deny: []string{"internal/server/...", "internal/engine/...", "internal/store/...", "internal/boincdb/...", "internal/query/...", "internal/boinc/..."}},
	{name: "the state store does not read BOINC's database",
		from: []string{"internal/store/..."}, deny: []string{"internal/boincdb/...", "internal/engine/...", "internal/query/..."}},
	{name: "BOINC's database speaks its own types, not the wire's",
		from: []string{"internal/boincdb/..."}, deny: []string{"workflow/wire/...", "internal/store/...", "internal/engine/..."}},
	{name: "the read side only reads: it holds no engine",
		from: []string{"internal/query/...", "internal/stats/...", "internal/report/...", "internal/metrics/..."}, deny: []string{"internal/engine/...", "internal/server/..."}},
	{name: "only the stores open databases",
		from: []string{"..."}, deny: sqlDrivers,
		except: []string{"internal/store/...", "internal/boincdb/...", "internal/sqldb/...", "internal/standin/...", "internal/mariadbtest/...", "internal/boinctest/..."}},
	{name: "the HTTP layer runs no daemon and no BOINC stand-in",
		from: []string{"internal/server"}, deny: []string{"internal/standin/...", "internal/standinserver/...", "internal/daemon/..."}},
	{name: "one advance path below the engine: the doors call it, it calls none of them",
		from: []string{"internal/advance/..."}, deny: []string{"internal/engine/...", "internal/server/...", "internal/daemon/...", "internal/store/...", "internal/boincdb/..."}},
	{name: "the public packages stand on the wire alone",
		from: []string{"workflow/..."}, deny: []string{"internal/store/...", "internal/engine/...", "internal/server/...", "internal/boincdb/..."}, transitive: true},
}

// pendingRules do not hold yet (the notifier's webhook client is still in
// the engine); TestImportRules reports them and moves none to importRules
// by itself: whoever makes one hold does.
var pendingRules = []importRule{
	{name: "the engine speaks no HTTP at all: the notifier's webhook client lives with the notifier daemon",
		from: []string{"internal/engine"}, deny: []string{"net/http/..."}},
}

// match says whether import path p matches pattern pat.
func match(pat, p string) bool {
	if pat == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pat
}

func matchAny(pats []string, p string) bool {
	return slices.ContainsFunc(pats, func(pat string) bool { return match(pat, p) })
}

// violations lists where the packages (path to direct imports) break the
// rules, one line each, sorted.
func violations(pkgs map[string][]string, rules []importRule) []string {
	var out []string
	for _, r := range rules {
		for p := range pkgs {
			if !matchAny(r.from, p) || matchAny(r.except, p) {
				continue
			}
			for imp, via := range reach(pkgs, p, r.transitive) {
				if !matchAny(r.deny, imp) {
					continue
				}
				how := ""
				if via != p {
					how = " (through " + via + ")"
				}
				out = append(out, fmt.Sprintf("%s imports %s%s: %s", p, imp, how, r.name))
			}
		}
	}
	slices.Sort(out)
	return out
}

// reach returns what p imports (and, transitive, what the module's
// packages it imports import), each with the package that imports it.
func reach(pkgs map[string][]string, p string, transitive bool) map[string]string {
	got := map[string]string{}
	queue := []string{p}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, imp := range pkgs[q] {
			if _, seen := got[imp]; seen || imp == p {
				continue
			}
			got[imp] = q
			if _, ours := pkgs[imp]; ours && transitive {
				queue = append(queue, imp)
			}
		}
	}
	return got
}

// modulePackages reads the imports of every package of the module (test
// files left out): the module's own paths without the module prefix.
func modulePackages(t *testing.T) map[string][]string {
	root := moduleRoot(t)
	module := modulePath(t, root)
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				imp = rest
			}
			if !slices.Contains(pkgs[pkg], imp) {
				pkgs[pkg] = append(pkgs[pkg], imp)
			}
		}
		if pkgs[pkg] == nil {
			pkgs[pkg] = []string{}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 30 || pkgs["internal/engine"] == nil {
		t.Fatalf("read only %d packages under %s", len(pkgs), root)
	}
	return pkgs
}

func TestImportRules(t *testing.T) {
	pkgs := modulePackages(t)
	for _, v := range violations(pkgs, importRules) {
		t.Error(v)
	}
	for _, r := range importRules {
		if !slices.ContainsFunc(r.from, func(pat string) bool {
			return slices.ContainsFunc(slices.Collect(maps.Keys(pkgs)), func(p string) bool { return match(pat, p) })
		}) {
			t.Errorf("rule %q: no package matches %v (renamed?)", r.name, r.from)
		}
	}
	pending := violations(pkgs, pendingRules)
	for _, v := range pending {
		t.Logf("pending: %s", v)
	}
	if len(pending) == 0 {
		t.Logf("every pending import rule holds: move pendingRules into importRules")
	}
}

// TestImportRulesCatch checks the checker: for each rule, a package it
// governs importing (directly, or through another package when the rule
// is transitive) what it denies is reported, and an excepted one is not.
func TestImportRulesCatch(t *testing.T) {
	for _, r := range slices.Concat(importRules, pendingRules) {
		from := concrete(r.from[0], "internal/x")
		deny := concrete(r.deny[0], "example.com/denied")
		pkgs := map[string][]string{from: {deny}, deny: {}}
		if got := violations(pkgs, []importRule{r}); len(got) != 1 {
			t.Errorf("rule %q: %s importing %s gave %q, want one violation", r.name, from, deny, got)
		}
		if r.transitive {
			pkgs := map[string][]string{from: {"internal/between"}, "internal/between": {deny}, deny: {}}
			if got := violations(pkgs, []importRule{r}); len(got) != 1 || !strings.Contains(got[0], "through internal/between") {
				t.Errorf("rule %q: an import through another package gave %q", r.name, got)
			}
		} else {
			pkgs := map[string][]string{from: {"internal/between"}, "internal/between": {deny}}
			if !matchAny(r.from, "internal/between") {
				if got := violations(pkgs, []importRule{r}); len(got) != 0 {
					t.Errorf("rule %q (direct imports only) reported %q", r.name, got)
				}
			}
		}
		for _, ex := range r.except {
			ex = concrete(ex, "")
			if got := violations(map[string][]string{ex: {deny}}, []importRule{r}); len(got) != 0 {
				t.Errorf("rule %q: excepted %s reported: %q", r.name, ex, got)
			}
		}
		if got := violations(map[string][]string{from: {"fmt"}}, []importRule{r}); len(got) != 0 {
			t.Errorf("rule %q: an allowed import reported: %q", r.name, got)
		}
	}
}

// concrete is a package path a pattern matches (instead for "...").
func concrete(pat, instead string) string {
	if pat == "..." {
		return instead
	}
	return strings.TrimSuffix(pat, "/...")
}

// publicPackages are the packages other programs import.
var publicPackages = []string{"workflow/client", "workflow/master", "workflow/wire"}

// TestPublicAPIUsesNoInternalTypes: what the public packages export (the
// signatures of functions and methods, the types and their fields, vars
// and consts) names no type of an internal package, which other modules
// could not name.
func TestPublicAPIUsesNoInternalTypes(t *testing.T) {
	root := moduleRoot(t)
	module := modulePath(t, root)
	for _, pkg := range publicPackages {
		fset := token.NewFileSet()
		found, err := parser.ParseDir(fset, filepath.Join(root, filepath.FromSlash(pkg)), func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Fatalf("no package in %s", pkg)
		}
		for _, p := range found {
			for name, f := range p.Files {
				for _, bad := range internalInAPI(f, module) {
					t.Errorf("%s: %s", filepath.Base(name), bad)
				}
			}
		}
	}
}

// internalInAPI lists the exported declarations of f that name a type of
// an internal package.
func internalInAPI(f *ast.File, module string) []string {
	internal := map[string]string{} // local name -> import path
	for _, is := range f.Imports {
		imp, _ := strconv.Unquote(is.Path.Value)
		if !strings.Contains(imp+"/", "/internal/") {
			continue
		}
		name := path.Base(imp)
		if is.Name != nil {
			name = is.Name.Name
		}
		internal[name] = imp
	}
	if len(internal) == 0 {
		return nil
	}
	var out []string
	check := func(what string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			// A function's body and a field's tag are not its API.
			if _, ok := n.(*ast.BlockStmt); ok {
				return false
			}
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
					out = append(out, fmt.Sprintf("%s uses %s.%s (%s)", what, id.Name, sel.Sel.Name, internal[id.Name]))
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			check(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						check(s.Name.Name, exportedPart(s.Type))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							check(n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedRecv says whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedPart is a type with a struct's unexported fields left out.
func exportedPart(t ast.Expr) ast.Node {
	st, ok := t.(*ast.StructType)
	if !ok {
		return t
	}
	kept := &ast.FieldList{}
	for _, f := range st.Fields.List {
		embedded := len(f.Names) == 0
		if embedded || slices.ContainsFunc(f.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
			kept.List = append(kept.List, &ast.Field{Names: f.Names, Type: f.Type})
		}
	}
	return kept
}

func TestPublicAPICheckCatches(t *testing.T) {
	src := `package client
import (
	"github.com/rboinc/rboinc/internal/boinc"
	st "github.com/rboinc/rboinc/internal/store"
)
type Options struct {
	Params boinc.WorkParams
	hidden st.User
}
func Hash(p string) (st.User, error) { var x boinc.WorkParams; _ = x; return st.User{}, nil }
func hash(p boinc.WorkParams) {}
`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := internalInAPI(f, "github.com/rboinc/rboinc")
	want := []string{
		"Options uses boinc.WorkParams (github.com/rboinc/rboinc/internal/boinc)",
		"Hash uses st.User (github.com/rboinc/rboinc/internal/store)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
