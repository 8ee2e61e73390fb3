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
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rboinc/rboinc/workflow/boinc"
	"github.com/rboinc/rboinc/workflow/spool"
)

func main() {
	level := slog.LevelInfo
	if v := os.Getenv("RBOINC_LOG_LEVEL"); v != "" {
		level.UnmarshalText([]byte(v))
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	os.Exit(run(os.Args[1:], log))
}

func run(args []string, log *slog.Logger) int {
	root := os.Getenv("RBOINC_ROOT")
	if len(args) >= 2 && (args[0] == "--root" || args[0] == "-root") {
		root, args = args[1], args[2:]
	} else if len(args) >= 1 && strings.HasPrefix(args[0], "--root=") {
		root, args = strings.TrimPrefix(args[0], "--root="), args[1:]
	}
	if root == "" {
		// Installed as a link to <root>/bin/rboinc-hook: the root is where
		// the program lies.
		if exe, err := os.Executable(); err == nil {
			if r := filepath.Dir(filepath.Dir(exe)); fileExists(filepath.Join(r, "rboinc.json")) {
				root = r
			}
		}
	}
	if root == "" {
		log.Error("hook: no server root: pass --root DIR, set RBOINC_ROOT, or run the rboinc-hook of a server root's bin/")
		return 2
	}
	root, err := filepath.Abs(root)
	if err != nil {
		log.Error("hook: bad server root", "err", err)
		return 2
	}
	call, err := boinc.ParseHookArgs(args)
	if err != nil || call.WUName == "" {
		// rboinc-server explains and ignores what it cannot use.
		return handOver(root, "", false, args, log)
	}
	if !fileExists(filepath.Join(root, "rboinc.json")) {
		log.Error("hook: not an rboinc server root; BOINC will retry this work unit", "root", root)
		return 1
	}
	alone := !spool.InStream(root)
	entry, err := spool.Write(root, call)
	if err != nil {
		log.Error("hook: failed; BOINC will retry this work unit", "wu", call.WUName, "err", err)
		return 1
	}
	f, err := spool.Lock(root, false)
	if errors.Is(err, spool.ErrBusy) && !alone {
		spool.MarkCall(root)
		return 0 // the creator takes the call in
	}
	if err == nil {
		f.Close() // rboinc-server takes it again, or finds it taken
	}
	return handOver(root, entry, alone, args, log)
}

// handOver replaces this process with `rboinc-server process`, the
// rboinc-server installed beside this program.
func handOver(root, entry string, alone bool, args []string, log *slog.Logger) int {
	exe, err := os.Executable()
	if err != nil {
		log.Error("hook: cannot find rboinc-server", "err", err)
		return 1
	}
	server := filepath.Join(filepath.Dir(exe), "rboinc-server")
	argv := []string{server, "process", "--root", root}
	if entry != "" {
		argv = append(argv, "--spooled", entry)
		if alone {
			argv = append(argv, "--alone")
		}
	}
	argv = append(argv, args...)
	err = syscall.Exec(server, argv, os.Environ())
	log.Error("hook: cannot run rboinc-server; BOINC will retry this work unit", "path", server, "err", err)
	return 1
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
