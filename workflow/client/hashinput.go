package client

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rboinc/rboinc/internal/fsync"
	"github.com/rboinc/rboinc/workflow/wire"
)

// hashBufs are the read buffers of hashInput: a jobs file may name
// thousands of small files, and a buffer each was most of the garbage.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// inputHasher hashes the input files of one submission, looking each up
// in the hash cache first when there is one. It keeps the bytes of small
// files it reads (up to keepTotal in all), so that the request sends the
// very bytes it hashed without opening the file again.
type inputHasher struct {
	cache *HashCache // nil: no cache
	wd    string     // working directory, for the cache's absolute paths
	kept  atomic.Int64
	// checkFiles: each file must be a readable regular file, and one that
	// is not is an unreadableError (chains of BuildChainsForSubmit).
	checkFiles bool
}

// A file of at most keepMax bytes is kept, while all kept add up to at most
// keepTotal: a jobs file may name thousands of small inputs.
const (
	keepMax   = 64 << 10
	keepTotal = 32 << 20
)

func newInputHasher(cache *HashCache) *inputHasher {
	h := &inputHasher{cache: cache}
	if cache != nil {
		wd, err := os.Getwd()
		if err != nil {
			h.cache = nil // no absolute paths, no cache
		}
		h.wd = wd
	}
	return h
}

// hash returns the MD5 and size of the file at path: the cached ones when
// the file opened is the very file cached, unchanged. data is the file's
// bytes when it was read and is small enough to keep, nil otherwise.
func (h *inputHasher) hash(path string) (ref wire.FileRef, data []byte, err error) {
	start := time.Now()
	f, err := fsync.OpenRead(path) // a plain descriptor: a jobs file may name thousands
	if err != nil {
		return wire.FileRef{}, nil, h.unreadable(path, err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return wire.FileRef{}, nil, h.unreadable(path, err)
	}
	if h.checkFiles && !before.Mode().IsRegular() {
		return wire.FileRef{}, nil, h.unreadable(path, errors.New("not a regular file"))
	}
	var abs string
	cached := h.cache != nil && before.Size() >= hashCacheMinSize
	if cached {
		abs = path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(h.wd, abs)
		}
		abs = filepath.Clean(abs)
		if sum, size, ok := h.cache.Lookup(abs, before); ok {
			return wire.FileRef{MD5: sum, Size: size}, nil, nil
		}
	}
	md := md5.New()
	var n int64
	if size := before.Size(); size <= keepMax && h.kept.Add(size+1) <= keepTotal {
		buf := make([]byte, size+1) // a byte more shows where it ends
		k, rerr := io.ReadFull(f, buf)
		switch {
		case rerr == nil: // longer than its fstat said: growing, not kept
			if _, err = f.Seek(0, io.SeekStart); err == nil {
				n, err = copyPooled(md, f)
			}
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			data = buf[:k]
			md.Write(data)
			n = int64(k)
		default:
			err = rerr
		}
	} else {
		n, err = copyPooled(md, f)
	}
	if err != nil {
		return wire.FileRef{}, nil, fmt.Errorf("hashing %s: reading it: %w", path, err)
	}
	sum := hex.EncodeToString(md.Sum(nil))
	if cached && n == before.Size() {
		if after, err := f.Stat(); err == nil {
			h.cache.Put(abs, sum, before, after, start)
		}
	}
	return wire.FileRef{MD5: sum, Size: n}, data, nil
}

// copyPooled reads f to its end into md through a pooled buffer.
func copyPooled(md hash.Hash, f *os.File) (int64, error) {
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	var n int64
	for {
		k, err := f.Read(*bp)
		md.Write((*bp)[:k])
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// unreadableError is an input file that cannot be opened, or is no regular
// file: the user's mistake, told as BuildChains tells it.
type unreadableError struct {
	path   string
	reason error // the system's reason (the errno), or "not a regular file"
}

func (e *unreadableError) Error() string { return fmt.Sprintf("cannot read %s: %v", e.path, e.reason) }
func (e *unreadableError) Unwrap() error { return e.reason }

// unreadable is the error for an input file hash cannot open or stat:
// unreadableError when the hasher checks files for BuildChainsForSubmit's
// chains, the plain error otherwise.
func (h *inputHasher) unreadable(path string, err error) error {
	if !h.checkFiles {
		return fmt.Errorf("hashing %s: %w", path, err)
	}
	return &unreadableError{path: path, reason: systemReason(err)}
}

// systemReason is the system's own reason (the errno) inside a path error,
// for messages that name the path themselves.
func systemReason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
