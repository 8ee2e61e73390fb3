package gahp

import (
	"os"
	"runtime/debug"
	"time"
)

// DefaultBanner is the version line's text: the protocol version, the
// build date ("Mmm dd yyyy", as the reference GAHP prints its compile
// date) and the server's name with its spaces escaped.
func DefaultBanner() string {
	return ProtocolVersion + " " + buildDate().Format("Jan 02 2006") + ` BOINC\ rboinc\ GAHP`
}

// buildDate is the commit time of the build, else the executable's
// modification time, else now.
func buildDate() time.Time {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					return t.UTC()
				}
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			return fi.ModTime().UTC()
		}
	}
	return time.Now().UTC()
}
