package client

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rboinc/rboinc/workflow/fsync"
	"github.com/rboinc/rboinc/workflow/wire"
)

// hashBufs are the read buffers of hashInput: a jobs file may name
// thousands of small files, and a buffer each was most of the garbage.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// inputHasher hashes the input files of one submission, looking each up
// in the hash cache first when there is one.
type inputHasher struct {
	cache *HashCache // nil: no cache
	wd    string     // working directory, for the cache's absolute paths
}

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
// the file opened is the very file cached, unchanged.
func (h *inputHasher) hash(path string) (wire.FileRef, error) {
	start := time.Now()
	f, err := fsync.OpenRead(path) // a plain descriptor: a jobs file may name thousands
	if err != nil {
		return wire.FileRef{}, fmt.Errorf("hashing %s: %w", path, err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return wire.FileRef{}, fmt.Errorf("hashing %s: %w", path, err)
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
			return wire.FileRef{MD5: sum, Size: size}, nil
		}
	}
	md := md5.New()
	n, err := copyPooled(md, f)
	if err != nil {
		return wire.FileRef{}, fmt.Errorf("hashing %s: reading it: %w", path, err)
	}
	sum := hex.EncodeToString(md.Sum(nil))
	if cached && n == before.Size() {
		if after, err := f.Stat(); err == nil {
			h.cache.Put(abs, sum, before, after, start)
		}
	}
	return wire.FileRef{MD5: sum, Size: n}, nil
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
