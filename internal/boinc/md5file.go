package boinc

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

// FileMD5 streams a file and returns its MD5 (hex) and size.
func FileMD5(path string) (string, int64, error) {
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

// SidecarText is the content of a .md5 file as BOINC's C code writes it:
// "<md5> <size as %.15e>\n".
func SidecarText(sum string, size int64) string {
	return sum + " " + strconv.FormatFloat(float64(size), 'e', 15, 64) + "\n"
}

// ReadSidecar parses path+".md5" the way BOINC's reader does: md5, space,
// a number, exactly one newline, end of file. ok is false when the sidecar
// is missing, malformed or older than the data file (BOINC recomputes then).
func ReadSidecar(path string) (sum string, size int64, ok bool) {
	data, err := os.ReadFile(path + ".md5")
	if err != nil {
		return "", 0, false
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		return "", 0, false
	}
	f := strings.Fields(s)
	if len(f) != 2 || len(f[0]) != 32 {
		return "", 0, false
	}
	if _, err := hex.DecodeString(f[0]); err != nil {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(f[1], 64)
	if err != nil || v < 0 {
		return "", 0, false
	}
	sfi, err1 := os.Stat(path + ".md5")
	dfi, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || sfi.ModTime().Unix() < dfi.ModTime().Unix() {
		return "", 0, false
	}
	return f[0], int64(v), true
}

// CreateSidecar writes path+".md5" where there is none, in place: one new
// file, no temporary name and rename (a submission writes thousands). It
// fails with an error matching fs.ErrExist when a sidecar is there. Only
// for a sidecar nothing reads before CreateSidecar returns: one a crash
// cut short is malformed, which ReadSidecar tells (and BOINC recomputes).
func CreateSidecar(path, sum string, size int64) error {
	f, err := fsync.CreateExcl(path+".md5", 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(SidecarText(sum, size)))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path + ".md5")
		return fmt.Errorf("writing %s.md5: %w", path, werr)
	}
	return nil
}

// WriteSidecar writes path+".md5" atomically.
func WriteSidecar(path, sum string, size int64) error {
	return WriteFileAtomic(path+".md5", []byte(SidecarText(sum, size)), 0o644)
}

// WriteFileAtomic writes data to a temporary file beside path and renames it
// into place, so readers never see a partial file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
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

// CopyFileAtomic streams src to dst through a temporary file in dst's
// directory, hashing on the way, syncs it and renames it into place, so
// nobody ever sees a partial dst. It returns the MD5 and size.
func CopyFileAtomic(src, dst string, perm os.FileMode) (string, int64, error) {
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
