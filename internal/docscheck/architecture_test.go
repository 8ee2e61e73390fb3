package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// moduleRoot is two levels up from this package (internal/docscheck).
const moduleRoot = "../.."

// decls are the names each package (by its package clause) declares at
// top level, and "Type.Method" / "Type.Field" for its types: parsed from
// every non-test Go file of the module.
func decls(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != moduleRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := out[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			out[f.Name.Name] = names
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					names[d.Name.Name] = true
					continue
				}
				names[recvType(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recvType is the type name of a method's receiver (*T, T, T[P]).
func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// codeName is a code span that reads as package.Name or package.Type.Name.
var codeName = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")

// TestArchitectureNamesExist: every `package.Func`, `package.Type` and
// `package.Type.Method` docs/architecture.md names in backticks, and every
// package.Name the picture (docs/architecture.svg) writes in its text,
// where package is one of the module's packages, is declared in the
// source.
func TestArchitectureNamesExist(t *testing.T) {
	pkgs := decls(t)
	check := func(file string, pattern *regexp.Regexp, least int) {
		b, err := os.ReadFile(filepath.Join(moduleRoot, "docs", file))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range pattern.FindAllStringSubmatch(line, -1) {
				names, ok := pkgs[m[1]]
				if !ok {
					continue // rboinc.json, config.xml: not a package
				}
				checked++
				if !names[m[2]] {
					t.Errorf("docs/%s:%d: %s.%s is named but not declared in package %s", file, i+1, m[1], m[2], m[1])
				}
			}
		}
		// The page names where each of the four ways starts and ends:
		// far more than this; fewer means the pattern stopped matching.
		if checked < least {
			t.Errorf("only %d names checked in docs/%s", checked, file)
		}
	}
	check("architecture.md", codeName, 20)
	check("architecture.svg", svgName, 10)
}

// svgName is package.Name or package.Type.Name in the picture's text.
var svgName = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)`)
