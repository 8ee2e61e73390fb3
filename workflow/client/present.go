package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/workflow/wire"
)

// LocalName is the name a result file gets on the scientist's disk: its
// name plus its first alias, if any (e.g. <wu>_1 + ".dcd").
func LocalName(rf wire.ResultFile) string {
	if len(rf.Aliases) > 0 {
		return rf.Name + rf.Aliases[0]
	}
	return rf.Name
}

// TargetDir is where rf goes under dir: dir itself, or dir/<chain> in
// tree mode.
func TargetDir(dir string, rf wire.ResultFile, tree bool) string {
	if tree {
		return filepath.Join(dir, rf.Chain)
	}
	return dir
}

// AlreadyPresent reports whether dir holds rf under its plain name or its
// name plus any alias: a scientist who decompressed x_1.log.gz to x_1.log,
// or renamed it to x_1.log.gz.bad, does not want it again.
func AlreadyPresent(dir string, rf wire.ResultFile) bool {
	if exists(filepath.Join(dir, rf.Name)) {
		return true
	}
	for _, a := range rf.Aliases {
		if exists(filepath.Join(dir, rf.Name+a)) {
			return true
		}
	}
	return false
}

// dirNames answers AlreadyPresent for many files from one read of each
// directory (names only) instead of a stat per name and alias: a group's
// retrieval checks thousands.
type dirNames map[string]map[string]bool

func (d dirNames) present(dir string, rf wire.ResultFile) bool {
	names, ok := d[dir]
	if !ok {
		names = readNames(dir)
		d[dir] = names
	}
	if names == nil { // unreadable: ask name by name
		return AlreadyPresent(dir, rf)
	}
	if names[rf.Name] {
		return true
	}
	for _, a := range rf.Aliases {
		if names[rf.Name+a] {
			return true
		}
	}
	return false
}

// readNames lists dir's entries; an absent directory holds nothing, one
// that cannot be read gives nil.
func readNames(dir string) map[string]bool {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}
	}
	if err != nil {
		return nil
	}
	defer f.Close()
	list, err := f.Readdirnames(-1)
	if err != nil {
		return nil
	}
	names := make(map[string]bool, len(list))
	for _, n := range list {
		names[n] = true
	}
	return names
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// checkResultFile rejects names from the server that could escape the
// download directory or that the client cannot verify.
func checkResultFile(rf wire.ResultFile, tree bool) error {
	if !safeBase(rf.Name) {
		return fmt.Errorf("the server sent an unsafe file name %q", rf.Name)
	}
	for _, a := range rf.Aliases {
		if strings.ContainsAny(a, "/\\\x00") || !safeBase(rf.Name+a) {
			return fmt.Errorf("the server sent an unsafe alias %q for %s", a, rf.Name)
		}
	}
	if tree && !naming.ValidIdent(rf.Chain) {
		return fmt.Errorf("the server sent an invalid chain name %q for %s", rf.Chain, rf.Name)
	}
	if len(rf.MD5) != 32 || strings.Trim(strings.ToLower(rf.MD5), "0123456789abcdef") != "" {
		return fmt.Errorf("the server sent an invalid MD5 %q for %s", rf.MD5, rf.Name)
	}
	return nil
}

// safeBase: a plain file name, not hidden (our temporary and lock files
// are), no separators.
func safeBase(s string) bool {
	return s != "" && !strings.HasPrefix(s, ".") && !strings.ContainsAny(s, "/\\\x00")
}
