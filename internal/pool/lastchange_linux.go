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
