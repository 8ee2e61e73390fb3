package engine

import (
	"os"
	"sync"
	"syscall"

	"github.com/rboinc/rboinc/workflow/boinc"
)

// digestCache keeps the MD5 of files by path, valid while the file is the
// same (device, inode, size, modification and change times).
type digestCache struct {
	mu   sync.Mutex
	m    map[string]digestEntry
	pool map[string]os.FileInfo // pool files by content, as last seen
}

// maxPoolFiles bounds the pool files remembered: past it, they are
// forgotten and seen afresh (one more stat each).
const maxPoolFiles = 1 << 20

func (c *digestCache) poolFile(sum string) os.FileInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pool[sum]
}

func (c *digestCache) notePoolFile(sum string, fi os.FileInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool == nil || len(c.pool) >= maxPoolFiles {
		c.pool = map[string]os.FileInfo{}
	}
	c.pool[sum] = fi
}

type digestEntry struct {
	dev, ino    uint64
	size        int64
	mtime, ctim int64
	sum         string
}

func entryOf(fi os.FileInfo) digestEntry {
	e := digestEntry{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.dev, e.ino = uint64(st.Dev), st.Ino
		e.ctim = st.Ctim.Nano()
	}
	return e
}

// sum is path's MD5, read again only when the file changed since.
func (c *digestCache) sum(path string, fi os.FileInfo) (string, error) {
	want := entryOf(fi)
	c.mu.Lock()
	got, ok := c.m[path]
	c.mu.Unlock()
	if ok {
		s := got.sum
		got.sum = ""
		if got == want {
			return s, nil
		}
	}
	sum, _, err := boinc.FileMD5(path)
	if err != nil {
		return "", err
	}
	// Stat again: a file that changed while it was read is read again
	// next time.
	if fi2, err := os.Stat(path); err == nil && entryOf(fi2) == want {
		want.sum = sum
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxPoolFiles {
			c.m = map[string]digestEntry{}
		}
		c.m[path] = want
		c.mu.Unlock()
	}
	return sum, nil
}

func (c *digestCache) forget(path string) {
	c.mu.Lock()
	delete(c.m, path)
	c.mu.Unlock()
}
