package pool

import (
	"os"
	"syscall"
)

// identify is what makes fi the same, unchanged file: device, inode, size,
// and the modification and change times (any write, rename or chmod moves
// the change time).
func identify(fi os.FileInfo) (verifiedFile, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return verifiedFile{}, false
	}
	return verifiedFile{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
