package engine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// syncForBOINC makes what a submission wrote durable before create_work
// hands its work units to BOINC: the pool's new contents, their links and
// .md5 files in BOINC's download hierarchy, and the chains' records. They
// are written without a sync each (thousands of small files); one sync of
// each file system involved (the server root's, and the download
// hierarchy's when it lies elsewhere) covers them all.
func (e *Engine) syncForBOINC() error {
	dirs := []string{e.Root}
	if !sameFS(e.Root, e.Proj.DownloadDir) {
		dirs = append(dirs, e.Proj.DownloadDir)
	}
	for _, d := range dirs {
		if err := syncFS(d); err != nil {
			return fmt.Errorf("making the submission durable (%s): %w", d, err)
		}
	}
	return nil
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

// diskError marks a failure of the server's own disk, as opposed to one of
// a chain: the work is retried later instead of failing the chain.
type diskError struct{ err error }

func (d *diskError) Error() string { return d.err.Error() }
func (d *diskError) Unwrap() error { return d.err }

func isDiskError(err error) bool {
	var d *diskError
	return errors.As(err, &d)
}
