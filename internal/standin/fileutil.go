package standin

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/rboinc/rboinc/internal/atomicfile"
)

// copyFile puts a copy of src at dst atomically.
func copyFile(src, dst string) error {
	_, _, err := atomicfile.Copy(src, dst, 0o644)
	return err
}

// copyToSlot copies an input into a slot as the client does (BOINC's
// boinc_copy): a plain copy, neither synced nor renamed into place, since a
// slot is scratch that the next run clears, and the app starts only after
// every input is in. It returns the copy's MD5, computed on the way, so
// that checking the input does not read it again.
func copyToSlot(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := newSlotFile(dst)
	if err != nil {
		return "", err
	}
	h := md5.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// newSlotFile creates dst anew for writing. A file there already
// (another input's link under the same open name) is replaced, not
// written through: it may be a download directory's file, which other
// work units share.
func newSlotFile(dst string) (*os.File, error) {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// moveFile renames src to dst, copying when they are on different file systems.
func moveFile(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyFile(src, dst); err != nil {
		return err
	}
	return os.Remove(src)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
