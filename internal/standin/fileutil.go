package standin

import (
	"errors"
	"os"
	"syscall"

	"github.com/rboinc/rboinc/internal/atomicfile"
)

// copyFile puts a copy of src at dst atomically.
func copyFile(src, dst string) error {
	_, _, err := atomicfile.Copy(src, dst, 0o644)
	return err
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
