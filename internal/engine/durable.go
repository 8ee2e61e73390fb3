package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/fsync"
)

// durableForBOINC makes what work units about to go to create_work read,
// and their records, durable first: BOINC's database survives a power cut,
// and a work unit whose inputs did not would fail. fresh are the pool
// contents whose data may not be on disk yet (a submission's new ones;
// the hook's outputs are on disk already); staged is one of the jobs'
// files in BOINC's download hierarchy. Files are written without a sync
// each (a submission brings thousands); here their data goes out, then one
// commit per file system carries all their names and links.
// Its errors are diskErrors.
func (e *Engine) durableForBOINC(fresh []string, staged string) error {
	contents := e.startDurableContents(fresh, staged)
	return e.durableState(contents)
}

// startDurableContents begins durableForBOINC's part for the files: the
// data of fresh and every name and link made so far (see durableForBOINC)
// on their file systems. A submission starts it as soon as its contents
// are written and staged, before its records commit; durableState then
// waits for it beside the records' sync.
func (e *Engine) startDurableContents(fresh []string, staged string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- e.durableContents(fresh, staged) }()
	return done
}

// durableState syncs the state database's log (its commits so far) and
// waits for contents, a startDurableContents; its errors are diskErrors.
func (e *Engine) durableState(contents <-chan error) error {
	t0 := time.Now()
	var errs []error
	if err := e.db.Sync(); err != nil {
		errs = append(errs, err)
	}
	dbTook := time.Since(t0)
	if err := <-contents; err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return &diskError{errors.Join(errs...)}
	}
	e.Log.Debug("durable for BOINC: state", "state_log_ms", ms(dbTook), "contents_wait_ms", ms(time.Since(t0)))
	return nil
}

// durableContents is durableForBOINC's part for the files.
func (e *Engine) durableContents(fresh []string, staged string) error {
	paths := make([]string, 0, len(fresh))
	ids := make(map[string]fileID, len(fresh))
	for _, sum := range fresh {
		p := e.Pool.Path(sum)
		id, ok := identity(p)
		if ok && e.synced.has(sum, id) {
			continue // made durable by this process, and the same file still
		}
		paths = append(paths, p)
		if ok {
			ids[sum] = id
		}
	}
	// The waits are independent and each mostly waits for the disk: they
	// run together, the contents' data written out while the names are
	// committed.
	t0 := time.Now()
	var barrierTook atomic.Int64
	dirs := []string{e.Pool.Dir}
	if staged != "" && !sameFS(dirs[0], filepath.Dir(staged)) {
		dirs = append(dirs, filepath.Dir(staged))
	}
	barriers := make(chan error, len(dirs))
	for _, d := range dirs {
		go func() {
			err := fsync.Barrier(d)
			barrierTook.Store(max(barrierTook.Load(), int64(time.Since(t0))))
			if err != nil {
				barriers <- fmt.Errorf("making new files durable in %s: %w", d, err)
				return
			}
			barriers <- nil
		}()
	}
	// All writes started first, then each waited for: one wait per file
	// made a submission's durability point most of its time. (Starting
	// each as it is written measured slower: the writers then wait for
	// the disk's block allocation.)
	var errs []error
	if err := fsync.DataAll(paths); err != nil {
		errs = append(errs, fmt.Errorf("writing new contents to disk: %w", err))
	}
	dataTook := time.Since(t0)
	for range dirs {
		if err := <-barriers; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &diskError{errors.Join(errs...)}
	}
	e.Log.Debug("durable for BOINC: contents", "files", len(paths), "known_synced", len(fresh)-len(paths), "data_ms", ms(dataTook),
		"barrier_ms", ms(time.Duration(barrierTook.Load())))
	e.synced.add(ids)
	return nil
}

// syncedSet remembers the pool files this process has made durable. A
// pool file never changes once written, so it needs no second sync: a
// resubmission of thousands of chains would otherwise open each of its
// inputs twice again. A file is known by its identity (device, inode,
// modification time, size), so a content collected and written anew is
// synced anew.
type syncedSet struct {
	mu sync.Mutex
	m  map[string]fileID
}

type fileID struct {
	dev, ino    uint64
	mtime, size int64
}

// syncedMax bounds the set (about 100 bytes an entry); when full it
// starts again, which costs only syncs already made.
const syncedMax = 1 << 18

func (s *syncedSet) has(sum string, id fileID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	got, ok := s.m[sum]
	return ok && got == id
}

func (s *syncedSet) add(ids map[string]fileID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m)+len(ids) > syncedMax {
		s.m = make(map[string]fileID, len(ids))
	}
	for sum, id := range ids {
		s.m[sum] = id
	}
}

// identity is a file's (device, inode, modification time, size); ok is
// false when it cannot be read.
func identity(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), mtime: fi.ModTime().UnixNano(), size: fi.Size()}, true
}

// diskError is a failure of the server's own disk, not of a chain: the
// work is tried again later instead of failing the chain.
type diskError struct{ err error }

func (d *diskError) Error() string { return d.err.Error() }
func (d *diskError) Unwrap() error { return d.err }

func isDiskError(err error) bool {
	var d *diskError
	return errors.As(err, &d) || IsNoSpace(err)
}

func sameFS(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return false
	}
	sa, ok1 := fa.Sys().(*syscall.Stat_t)
	sb, ok2 := fb.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}
