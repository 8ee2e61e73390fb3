package pool

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/rboinc/rboinc/internal/fsync"
)

// ErrShortContent is returned by WriteVerified when r ends before size
// bytes: the sender stopped in the middle of a content.
var ErrShortContent = errors.New("the content ended early")

// copyBufs are the buffers of WriteVerified, reused: a submission brings
// thousands of small contents.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// WriteVerified reads exactly size bytes from r into the pool as content
// want, hashing them on the way: a temporary file in the content's
// directory, renamed to its name only when the bytes have that MD5, so the
// pool never holds anything its names do not say. On a mismatch it still
// reads all size bytes, so that r is positioned at what follows.
func (p *Pool) WriteVerified(r io.Reader, want string, size int64) error {
	if !ValidMD5(want) {
		return fmt.Errorf("%q is not an MD5 checksum", want)
	}
	dir := filepath.Dir(p.Path(want))
	f, err := createTemp(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = createTemp(dir)
		}
	}
	if err != nil {
		return fmt.Errorf("writing into the pool: %w", err)
	}
	tmp := f.Name()
	h := md5.New()
	bp := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(io.MultiWriter(f, h), io.LimitReader(r, size), *bp)
	copyBufs.Put(bp)
	if err == nil && n < size {
		err = fmt.Errorf("%w: %d of %d bytes of %s", ErrShortContent, n, size, want)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			err = &MismatchError{Want: want, Got: got}
		}
	}
	if err == nil {
		err = os.Rename(tmp, p.Path(want))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// createTemp creates a temporary file in dir, read-only from the start
// (its mode is set at creation: a chmod would be one more metadata change
// per content).
func createTemp(dir string) (*os.File, error) {
	for {
		var b [8]byte
		rand.Read(b[:])
		f, err := fsync.CreateExcl(filepath.Join(dir, ".in"+hex.EncodeToString(b[:])), 0o444)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// MismatchError is a content whose bytes do not have the announced MD5.
type MismatchError struct {
	Want, Got string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("content announced as %s has MD5 %s", e.Want, e.Got)
}
