package wucreate

import (
	"os"

	"github.com/rboinc/rboinc/internal/atomicfile"
)

// copyFile puts a copy of src at dst atomically.
func copyFile(src, dst string) error {
	_, _, err := atomicfile.Copy(src, dst, 0o644)
	return err
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
