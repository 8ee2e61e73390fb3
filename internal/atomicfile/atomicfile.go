// Package atomicfile writes a file whole or not at all: through a
// temporary file beside it and a rename, so that no reader ever sees part
// of it. The server, the stand-in and the clients all write this way.
package atomicfile

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/fsync"
)

// Write writes data to a temporary file beside path and renames it
// into place, so readers never see a partial file.
func Write(path string, data []byte, perm os.FileMode) error {
	dir, base := splitDir(path)
	// The temporary file is made with its final mode (no chmod after):
	// every metadata change waits for the file system's journal, and a
	// submission writes thousands of these.
	var f *os.File
	var tmp string
	var err error
	for range 10 {
		tmp = dir + "." + base + ".tmp" + strconv.FormatUint(rand.Uint64(), 36)
		f, err = fsync.CreateExcl(tmp, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}

func splitDir(path string) (string, string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return ".", path
	}
	return path[:i+1], path[i+1:]
}

// Copy streams src to dst through a temporary file in dst's
// directory, hashing on the way, syncs it and renames it into place, so
// nobody ever sees a partial dst. It returns the MD5 and size.
func Copy(src, dst string, perm os.FileMode) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	dir, base := splitDir(dst)
	out, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return "", 0, err
	}
	tmp := out.Name()
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return "", 0, fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
