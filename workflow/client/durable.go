package client

import (
	"fmt"
	"os"
)

// Retrieval makes its downloads durable a batch at a time: the files of a
// batch are written under temporary names without syncing, one sync makes
// their contents durable, they are renamed into place, and a second sync
// makes the names durable; all before any of them is acknowledged, after
// which the server deletes its copy. So destination names still never hold
// a partial file, at two syncs per batch instead of one per file (on a
// journaling file system every fsync is a journal commit). A batch is
// committed while the next one downloads.

// A batch closes at commitFiles files or commitBytes bytes, so that an
// interrupted retrieval keeps most of what it fetched.
const (
	commitFiles = 512
	commitBytes = 256 << 20
)

// commitQueue bounds the verified downloads waiting for the batch being
// committed. A sync writes out whatever is dirty on the file system, so it
// sometimes takes longer than the next batch takes to download; four
// batches of slack keep the workers from waiting on it, and the kernel's
// own limit on dirty pages bounds the bytes.
const commitQueue = 4 * commitFiles

// pendingFile is a verified download not yet durable.
type pendingFile struct {
	i    int    // index in the download list
	tmp  string // temporary name beside dest
	dest string
	size int64
}

// committer takes verified downloads from the download workers and, in a
// goroutine of its own, commits them a batch at a time while the workers
// go on downloading. It holds one batch being committed and at most
// commitQueue downloads waiting: a worker that finds the queue full waits.
type committer struct {
	in     chan pendingFile
	done   chan struct{}
	errs   []error // by download index; nil once committed
	commit func(batch []pendingFile) []error
}

// startCommitter starts the commits of n downloads.
func startCommitter(n int) *committer { return newCommitter(n, commitBatch) }

func newCommitter(n int, commit func(batch []pendingFile) []error) *committer {
	c := &committer{in: make(chan pendingFile, commitQueue), done: make(chan struct{}),
		errs: make([]error, n), commit: commit}
	go c.run()
	return c
}

// add queues a verified download.
func (c *committer) add(f pendingFile) { c.in <- f }

// wait commits what is left, once the workers are done, and returns the
// commit error of each download by index.
func (c *committer) wait() []error {
	close(c.in)
	<-c.done
	return c.errs
}

func (c *committer) run() {
	defer close(c.done)
	var batch []pendingFile
	var bytes int64
	for f := range c.in {
		batch = append(batch, f)
		bytes += f.size
		if len(batch) >= commitFiles || bytes >= commitBytes {
			c.record(batch)
			batch, bytes = nil, 0
		}
	}
	if len(batch) > 0 {
		c.record(batch)
	}
}

func (c *committer) record(batch []pendingFile) {
	for k, err := range c.commit(batch) {
		c.errs[batch[k].i] = err
	}
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
