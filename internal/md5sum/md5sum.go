// Package md5sum is the MD5 of a file, the name content has in rboinc
// (the pool, BOINC's download directory, a submission's inputs), computed
// the same way by the clients and the server.
package md5sum

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// File streams a file and returns its MD5 (hex) and size.
func File(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := md5.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
