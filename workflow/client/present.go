package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/workflow/naming"
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
