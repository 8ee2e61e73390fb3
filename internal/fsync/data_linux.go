package fsync

import (
	"os"

	"golang.org/x/sys/unix"
)

// Data writes a file's data out to the disk and waits for it, without the
// journal commit an fsync would force (sync_file_range(2)): a Barrier
// commits its size and name later, with those of other files.
func Data(f *os.File) error {
	return unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}

// StartData starts writing a file's data out without waiting for it, so
// that DataAll's waits find most of the writes of a batch done together.
func StartData(f *os.File) error {
	return unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
