// Command rboinc-hook is the assimilator hook BOINC's script_assimilator
// runs once per finished work unit (installed as the project's
// bin/rboinc_hook). It does only what must happen before BOINC deletes the
// outputs: it spools the call (package spool) and, while rboinc's creator
// takes calls in, returns. Otherwise, or when the call comes alone and
// should wait for its next step, it runs `rboinc-server process --spooled`
// (the rboinc-server installed beside it) for the rest. It opens no
// database, so that a call costs little more than a process start.
//
// Usage: rboinc-hook [--root DIR] ARGS... with the ARGS of `rboinc-server
// process` (WU_ID PATH..., the token form, or --error MASK WU_NAME WU_ID
// BATCH). Without --root (and RBOINC_ROOT) the server root is the one whose
// bin/ holds the program, as when the project's bin/rboinc_hook links to
// it.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/buildinfo"
	"github.com/rboinc/rboinc/internal/hookargs"
	"github.com/rboinc/rboinc/internal/spool"
)

// It imports little on purpose (no log/slog, no JSON, no BOINC package):
// BOINC starts it once per work unit, and every package's initialisation
// is paid at each start.

func main() { os.Exit(run(os.Args[1:])) }

// logError writes one line in the format of rboinc-server's logs
// (log/slog's text handler) to stderr, which BOINC keeps in the
// assimilator's log.
func logError(msg string, kv ...any) {
	line := fmt.Sprintf("time=%s level=ERROR msg=%q", time.Now().Format(time.RFC3339Nano), msg)
	for i := 0; i+1 < len(kv); i += 2 {
		line += fmt.Sprintf(" %v=%q", kv[i], fmt.Sprint(kv[i+1]))
	}
	fmt.Fprintln(os.Stderr, line)
}

func run(args []string) int {
	// BOINC never calls the hook with one of these alone.
	if len(args) == 1 {
		switch args[0] {
		case "--version", "-version":
			fmt.Println(buildinfo.Version("rboinc-hook"))
			return 0
		case "--help", "-help", "-h":
			fmt.Print(hookargs.Usage)
			return 0
		}
	}
	root, args := hookargs.SplitRoot(args, os.Getenv)
	if root == "" {
		// Installed as a link to <root>/bin/rboinc-hook: the root is where
		// the program lies.
		if exe, err := os.Executable(); err == nil {
			if r, err := spool.CheckRoot(filepath.Dir(filepath.Dir(exe))); err == nil {
				root = r
			}
		}
	}
	if root == "" {
		logError("hook: no server root: pass --root DIR, set RBOINC_ROOT, or run the rboinc-hook of a server root's bin/")
		return 2
	}
	root, err := filepath.Abs(root)
	if err != nil {
		logError("hook: bad server root", "err", err)
		return 2
	}
	call, err := hookargs.Parse(args)
	if err != nil || call.WUName == "" {
		// rboinc-server explains and ignores what it cannot use.
		return handOver(root, "", false, args)
	}
	if _, err := spool.CheckRoot(root); err != nil {
		logError("hook: not an rboinc server root; BOINC will retry this work unit", "root", root)
		return 1
	}
	a, err := spool.Accept(root, call)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			logError("hook: the server root's disk is full; BOINC will retry this work unit once space is freed", "wu", call.WUName, "root", root, "err", err)
			return 1
		}
		logError("hook: failed; BOINC will retry this work unit", "wu", call.WUName, "err", err)
		return 1
	}
	if a.Done {
		return 0 // the creator takes the call in
	}
	return handOver(root, a.Entry, a.Alone, args)
}

// handOver replaces this process with `rboinc-server process`, the
// rboinc-server installed beside this program.
func handOver(root, entry string, alone bool, args []string) int {
	exe, err := os.Executable()
	if err != nil {
		logError("hook: cannot find rboinc-server", "err", err)
		return 1
	}
	server := filepath.Join(filepath.Dir(exe), "rboinc-server")
	argv := append([]string{server}, hookargs.HandoverArgs(root, entry, alone, args)...)
	err = syscall.Exec(server, argv, os.Environ())
	spool.RecordFailure(root, "", "cannot run "+server+": "+err.Error())
	logError("hook: cannot run rboinc-server; BOINC will retry this work unit", "path", server, "err", err)
	return 1
}
