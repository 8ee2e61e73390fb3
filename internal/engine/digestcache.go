package engine

import (
	"os"
	"sync"

	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/pool"
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

// digestEntry is a file's MD5 and the stamp it had when read.
type digestEntry struct {
	pool.Stamp
	sum string
}

// sum is path's MD5, read again only when the file changed since.
func (c *digestCache) sum(path string, fi os.FileInfo) (string, error) {
	stamp, known := pool.StampOf(fi) // not known: nothing is cached
	c.mu.Lock()
	got, ok := c.m[path]
	c.mu.Unlock()
	if ok && known && got.Stamp == stamp {
		return got.sum, nil
	}
	sum, _, err := md5sum.File(path)
	if err != nil {
		return "", err
	}
	// Stat again: a file that changed while it was read is read again
	// next time.
	if fi2, err := os.Stat(path); err == nil && known {
		if again, _ := pool.StampOf(fi2); again != stamp {
			return sum, nil
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxPoolFiles {
			c.m = map[string]digestEntry{}
		}
		c.m[path] = digestEntry{Stamp: stamp, sum: sum}
		c.mu.Unlock()
	}
	return sum, nil
}

func (c *digestCache) forget(path string) {
	c.mu.Lock()
	delete(c.m, path)
	c.mu.Unlock()
}
