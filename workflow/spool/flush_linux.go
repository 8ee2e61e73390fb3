package spool

import (
	"os"

	"golang.org/x/sys/unix"
)

// flushData writes a file's data to the disk and waits for it, without the
// journal commit an fsync would add: the fsync of the directory that
// follows commits the metadata of every file of a spool entry at once.
func flushData(f *os.File) error {
	return unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}
