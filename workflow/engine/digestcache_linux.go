package engine

import (
	"os"
	"syscall"
)

// entryOf identifies fi by device, inode, size, and modification and change
// times (a write, rename or chmod moves the change time, which no one can
// set back).
func entryOf(fi os.FileInfo) digestEntry {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return digestEntry{}
	}
	return digestEntry{known: true, dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(),
		mtime: st.Mtim.Nano(), ctim: st.Ctim.Nano()}
}
