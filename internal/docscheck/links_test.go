package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pages are the README and every page of docs/, relative to the module root.
func pages(t *testing.T) []string {
	t.Helper()
	ps, err := filepath.Glob(filepath.Join(moduleRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range ps {
		rel, err := filepath.Rel(moduleRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rel)
	}
	if len(out) < 10 {
		t.Fatalf("only %d pages: %v", len(out), out)
	}
	return out
}

// link is a Markdown link or image target: ](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link and image of the README and docs/
// leads to a file of the repository, and an anchor into a Markdown file
// to one of its headings (as GitHub makes anchors).
func TestDocsLinks(t *testing.T) {
	anchors := map[string]map[string]bool{}
	for _, page := range pages(t) {
		b, err := os.ReadFile(filepath.Join(moduleRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
				}
				if _, err := os.Stat(filepath.Join(moduleRoot, path)); err != nil {
					t.Errorf("%s:%d: link to %s: %v", page, i+1, target, err)
					continue
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				if anchors[path] == nil {
					anchors[path] = headingAnchors(t, path)
				}
				if !anchors[path][anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading with the anchor %q", page, i+1, target, path, anchor)
				}
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation but - and _ dropped, spaces as -, a
// repeated one numbered -1, -2...
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		a := slug(strings.TrimLeft(line, "#"))
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestSlug: headings with code, punctuation and apostrophes make the
// anchors GitHub makes of them.
func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		" Purge, events and `-follow`":                                   "purge-events-and--follow",
		" 3b. Or rboinc's own assimilator (native): hook or native?":     "3b-or-rboincs-own-assimilator-native-hook-or-native",
		" Configuration keys (`rboinc.json`)":                            "configuration-keys-rboincjson",
		" Installing the commands, manual pages and completions":         "installing-the-commands-manual-pages-and-completions",
		" BOINC's database: the native assimilator, and create_work (x)": "boincs-database-the-native-assimilator-and-create_work-x",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestReadmeShort: the README says what rboinc is, the two commands, a
// picture and where to read on; everything else lives in docs/.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n >= 250 {
		t.Errorf("README.md has %d lines, want under 250: move the detail into a page of docs/", n)
	}
	for _, want := range []string{"bash examples/demo.sh", "go test -race ./...", "RBOINC_TEST_LONG=1", "docs/architecture.svg"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}
