package client

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// FuzzCheckResultFile: whatever names the server sends, an accepted file
// lands directly in the download directory (or its chain subdirectory).
func FuzzCheckResultFile(f *testing.F) {
	f.Add("w_1", ".log", "c1", true)
	f.Add("../x", "", "c1", false)
	f.Add("w_1", "/../../etc/passwd", "c1", false)
	f.Add("w_1", ".dcd", "..", true)
	f.Fuzz(func(t *testing.T, name, alias, chain string, tree bool) {
		rf := wire.ResultFile{Name: name, Chain: chain, MD5: strings.Repeat("a", 32)}
		if alias != "" {
			rf.Aliases = []string{alias}
		}
		if checkResultFile(rf, tree) != nil {
			return
		}
		root := "/dl"
		dir := TargetDir(root, rf, tree)
		p := filepath.Join(dir, LocalName(rf))
		if filepath.Dir(p) != filepath.Clean(dir) || (tree && filepath.Dir(dir) != root) || (!tree && dir != root) {
			t.Fatalf("name %q alias %q chain %q lands at %s", name, alias, chain, p)
		}
		if strings.HasPrefix(filepath.Base(p), ".") {
			t.Fatalf("hidden file %s", p)
		}
	})
}
