package client

import (
	"os"
	"sync"
	"syscall"
)

// identifyFile is the identity of a file from its stat.
func identifyFile(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// localFSTypes are the file systems whose times and inode numbers the
// cache trusts: local ones, where a change is seen at once. Network file
// systems cache attributes and take times from another clock; overlay
// and FUSE file systems report what their lower layers say.
var localFSTypes = map[int64]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0xF2F52010: true, // f2fs
	0x2FC12FC1: true, // zfs
	0xCA451A4E: true, // bcachefs
}

var localDevs sync.Map // device -> bool: whether its file system is local

// localFS reports whether device dev, holding directory dir, is a local
// file system the cache trusts; asked once per device.
func localFS(dev uint64, dir string) bool {
	if v, ok := localDevs.Load(dev); ok {
		return v.(bool)
	}
	var st syscall.Statfs_t
	ok := syscall.Statfs(dir, &st) == nil && localFSTypes[int64(st.Type)]
	localDevs.Store(dev, ok)
	return ok
}
