// Package buildinfo says which build a program is, for the --version of
// every rboinc command. It imports only the runtime, so that rboinc-hook,
// which BOINC starts once per work unit, can use it at no cost.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version is the line a command prints for --version: prog, the module
// version ("(devel)" for a build from a checkout), the VCS revision and
// whether the checkout had changes, the commit time, and the Go toolchain
// and platform.
func Version(prog string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return prog + " (no build information)"
	}
	return Format(prog, bi)
}

// Format is Version for the build information bi.
func Format(prog string, bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	out := prog + " " + v
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		case "vcs.time":
			at = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " rev " + rev
		if modified {
			out += " (modified)"
		}
		if at != "" {
			out += " of " + at
		}
	}
	// go build leaves the revision out where it finds no repository (a
	// source archive, a git worktree, -buildvcs=false).
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return out + ", " + goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}
