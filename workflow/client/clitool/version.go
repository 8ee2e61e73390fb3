package clitool

import (
	"fmt"
	"runtime/debug"
)

// Version says which build a program is: the module version (a release
// tag, or "(devel)" for a build from a checkout) and the VCS revision it
// was built from, marked when the checkout had changes.
func Version(prog string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return prog + " (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified, at string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		case "vcs.time":
			at = s.Value
		}
	}
	out := prog + " " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += fmt.Sprintf(" (revision %s%s", rev, modified)
		if at != "" {
			out += ", " + at
		}
		out += ")"
	}
	return out + ", " + bi.GoVersion + " " + goPlatform()
}
