package pool

import (
	"os"
	"syscall"
	"time"
)

// lastChange is the later of fi's modification and change times: a rename
// or a new link (an upload moved in, a result adopted) changes the latter
// and keeps the former.
func lastChange(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(0, st.Ctim.Nano()); c.After(t) {
			return c
		}
	}
	return t
}

// markWanted makes path look just changed to lastChange without changing
// its modification time: setting the access time alone moves the change
// time. The modification time is what a staged link's .md5 sidecar is
// checked against (rboinc's and BOINC's readers take a sidecar older than
// its file for stale): a new one would have each staged content's sidecar
// written again at its next use.
func markWanted(path string) error {
	return os.Chtimes(path, time.Now(), time.Time{})
}
