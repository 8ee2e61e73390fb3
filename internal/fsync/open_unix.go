//go:build unix

package fsync

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenRead opens a file for reading as a plain descriptor: os.Open offers
// every file to the runtime's poller first, four more system calls that a
// regular file only refuses (a batch of outputs opens thousands).
func OpenRead(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// CreateExcl creates a new file for writing with mode perm exactly,
// failing if path exists, as a plain descriptor (see OpenRead). The mode
// is given at creation; only where the umask narrows it is it set again.
func CreateExcl(path string, perm os.FileMode) (*os.File, error) {
	perm = perm.Perm()
	for {
		fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		f := os.NewFile(uintptr(fd), path)
		if perm&^umask != perm {
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(path)
				return nil, err
			}
		}
		return f, nil
	}
}

// umask is the process's, read once before anything runs (reading it
// means setting it).
var umask = func() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}()
