package pool

import (
	"os"
	"syscall"
)

// StampOf tells what makes fi the same, unchanged file.
func StampOf(fi os.FileInfo) (Stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{}, false
	}
	return Stamp{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
