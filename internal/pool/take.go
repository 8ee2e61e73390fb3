package pool

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/rboinc/rboinc/internal/fsync"
)

// TakeOutput puts a file BOINC is about to delete (a finished work unit's
// output in the upload hierarchy) at dst, atomically, and returns its MD5
// and size. It hard-links when it can: the hook then moves no data, and
// BOINC's file_deleter only removes its own name. Across file systems, or
// when the kernel refuses to link another user's file, it copies. Either
// way, with durable set, the content is on disk before it returns, because
// BOINC forgets the output once the hook has returned; a file taken from
// the hook's spool is on disk already.
func TakeOutput(src, dst string, durable bool) (string, int64, error) {
	how := leaveData
	if durable {
		how = syncData
	}
	sum, size, _, _, err := takeOutput(src, dst, how)
	return sum, size, err
}

// TakeOutputStarted is TakeOutput that starts writing the file's data out
// and leaves the wait to the caller (fsync.WaitData over many outputs). It
// also tells whether it made dst (nothing was there before).
func TakeOutputStarted(src, dst string) (sum string, size int64, made bool, err error) {
	sum, size, made, _, err = takeOutput(src, dst, startData)
	return sum, size, made, err
}

// TakeOutputHeld is TakeOutputStarted that also hands over the taken
// file's open descriptor, for the wait for its data (fsync.Data) without
// opening it again; the caller closes it. f is nil when the take copied
// the file (its data is on disk already).
func TakeOutputHeld(src, dst string) (sum string, size int64, made bool, f *os.File, err error) {
	return takeOutput(src, dst, startDataHeld)
}

// What a take does about the taken file's data.
const (
	leaveData = iota
	startData
	startDataHeld // startData, the descriptor kept open for the caller
	syncData
)

func takeOutput(src, dst string, how int) (string, int64, bool, *os.File, error) {
	// Where dst is not there yet, dst itself is the link: it is the
	// finished output's inode, whole from the start, so no temporary name
	// is needed to make it appear atomically.
	err := os.Link(src, dst)
	switch {
	case err == nil:
		// The mode is set best effort: the inode may belong to BOINC's
		// upload handler.
		sum, size, f, err := hashFile(dst, how)
		if err != nil {
			os.Remove(dst)
			return "", 0, false, nil, fmt.Errorf("taking output %s: %w", src, err)
		}
		return sum, size, true, f, nil
	case unlinkable(err): // dst was not there either
		sum, size, err := CopyAtomic(src, dst, 0o444)
		return sum, size, err == nil, nil, err
	case !errors.Is(err, fs.ErrExist):
		return "", 0, false, nil, fmt.Errorf("taking output %s: %w", src, err)
	}
	// dst is there (a take before a crash, a retry): replaced whole.
	tmp, err := linkTemp(src, dst)
	if unlinkable(err) {
		sum, size, err := CopyAtomic(src, dst, 0o444)
		return sum, size, false, nil, err
	}
	if err != nil {
		return "", 0, false, nil, fmt.Errorf("taking output %s: %w", src, err)
	}
	sum, size, f, err := hashFile(tmp, how)
	if err == nil {
		err = publish(tmp, dst)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.Remove(tmp)
		return "", 0, false, nil, fmt.Errorf("taking output %s: %w", src, err)
	}
	return sum, size, false, f, nil
}

// unlinkable tells a link refused because it would cross file systems, or
// because the kernel does not let this user link another's file: a copy
// does instead.
func unlinkable(err error) bool {
	return errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM)
}

// hashFile reads a file once for its MD5, makes it read-only (best
// effort) and, as how says, flushes it to disk or starts to. All of it on
// the one open descriptor: a take is a handful of system calls, and a
// batch takes thousands. With startDataHeld the descriptor is returned
// open (nil otherwise).
func hashFile(path string, how int) (string, int64, *os.File, error) {
	f, err := fsync.OpenRead(path)
	if err != nil {
		return "", 0, nil, err
	}
	h := md5.New()
	bp := hashBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(h, onlyReader{f}, *bp)
	hashBufs.Put(bp)
	if err == nil {
		f.Chmod(0o444)
		switch how {
		case syncData:
			err = f.Sync()
		case startData, startDataHeld:
			err = fsync.StartData(f)
		}
	}
	if err != nil || how != startDataHeld {
		f.Close()
		f = nil
	}
	if err != nil {
		return "", 0, nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, f, nil
}

// hashBufs are hashFile's read buffers: io.Copy would make a new 32 KiB
// one per file (os.File's WriteTo does), more work than reading a small
// output.
var hashBufs = sync.Pool{New: func() any {
	b := make([]byte, 64<<10)
	return &b
}}

// onlyReader hides the file's WriteTo from io.CopyBuffer, which would
// otherwise take that path and its own buffer.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
