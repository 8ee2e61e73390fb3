package client

import (
	"fmt"
	"os"
	"sync"
)

// Retrieval makes its downloads durable a batch at a time: the files of a
// batch are written under temporary names without syncing, one sync makes
// their contents durable, they are renamed into place, and a second sync
// makes the names durable; all before any of them is acknowledged, after
// which the server deletes its copy. So destination names still never hold
// a partial file, at two syncs per batch instead of one per file (on a
// journaling file system every fsync is a journal commit).

// A batch closes at commitFiles files or commitBytes bytes, so that an
// interrupted retrieval keeps most of what it fetched.
const (
	commitFiles = 512
	commitBytes = 256 << 20
)

// pendingFile is a verified download not yet durable.
type pendingFile struct {
	i    int    // index in the download list
	tmp  string // temporary name beside dest
	dest string
	size int64
}

// committer collects verified downloads from the download workers and
// commits them in batches.
type committer struct {
	mu      sync.Mutex
	pending []pendingFile
	bytes   int64
	errs    []error // by download index; stays nil once committed
}

func newCommitter(n int) *committer { return &committer{errs: make([]error, n)} }

// add queues a verified download; the worker that fills a batch commits it.
func (c *committer) add(f pendingFile) {
	c.mu.Lock()
	c.pending = append(c.pending, f)
	c.bytes += f.size
	var batch []pendingFile
	if len(c.pending) >= commitFiles || c.bytes >= commitBytes {
		batch, c.pending, c.bytes = c.pending, nil, 0
	}
	c.mu.Unlock()
	if batch != nil {
		c.commit(batch)
	}
}

// flush commits what is left; call it once the workers are done.
func (c *committer) flush() {
	c.mu.Lock()
	batch := c.pending
	c.pending, c.bytes = nil, 0
	c.mu.Unlock()
	if len(batch) > 0 {
		c.commit(batch)
	}
}

func (c *committer) commit(batch []pendingFile) {
	errs := commitBatch(batch)
	c.mu.Lock()
	for k, f := range batch {
		c.errs[f.i] = errs[k]
	}
	c.mu.Unlock()
}

// commitBatch makes the contents durable, renames the files into place and
// makes the names durable. It returns an error per file.
func commitBatch(batch []pendingFile) []error {
	errs := make([]error, len(batch))
	if err := syncContents(batch); err != nil {
		for k, f := range batch {
			os.Remove(f.tmp)
			errs[k] = fmt.Errorf("writing %s: %w", f.dest, err)
		}
		return errs
	}
	for k, f := range batch {
		if err := os.Rename(f.tmp, f.dest); err != nil {
			os.Remove(f.tmp)
			errs[k] = fmt.Errorf("writing %s: %w", f.dest, err)
		}
	}
	if err := syncNames(batch); err != nil {
		// In place but not known to be durable: not acknowledged now.
		for k, f := range batch {
			if errs[k] == nil {
				errs[k] = fmt.Errorf("writing %s: %w", f.dest, err)
			}
		}
	}
	return errs
}
