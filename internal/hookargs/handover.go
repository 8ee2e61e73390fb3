package hookargs

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The hand-over from rboinc-hook to rboinc-server: once rboinc-hook has
// spooled a call it may replace itself with
//
//	rboinc-server process --root ROOT [--spooled ENTRY [--alone]] ARGS...
//
// (the ARGS BOINC gave the hook). HandoverArgs writes those arguments and
// SplitSpooled reads them back, so both sides keep one spelling.

// HandoverArgs is the arguments after `rboinc-server` that hand a call over:
// entry is its spool entry ("" when the hook could not read the call and
// leaves it to the server), alone that it waits for its next step.
func HandoverArgs(root, entry string, alone bool, args []string) []string {
	argv := []string{"process", "--root", root}
	if entry != "" {
		argv = append(argv, "--spooled", entry)
		if alone {
			argv = append(argv, "--alone")
		}
	}
	return append(argv, args...)
}

// SplitSpooled takes a leading --spooled ENTRY [--alone] off the arguments
// of `rboinc-server process` (after SplitRoot); entry is "" without one.
func SplitSpooled(args []string) (entry string, alone bool, rest []string, err error) {
	if len(args) < 2 || args[0] != "--spooled" {
		return "", false, args, nil
	}
	entry, rest = args[1], args[2:]
	// A name in the spool itself: "/" is its own base name too.
	if entry != filepath.Base(entry) || strings.ContainsRune(entry, '/') || strings.HasPrefix(entry, ".") {
		return "", false, rest, fmt.Errorf("bad --spooled entry name %q", entry)
	}
	if len(rest) >= 1 && rest[0] == "--alone" {
		alone, rest = true, rest[1:]
	}
	return entry, alone, rest, nil
}
