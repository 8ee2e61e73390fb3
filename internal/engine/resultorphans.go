package engine

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/naming"
)

// orphanScanLimit bounds the result files one collection pass looks at;
// the next pass goes on where it stopped, so a large results area is
// covered over several passes at a bounded cost each.
var orphanScanLimit = 20000

// orphanCursor is the results directory and file the next pass starts
// after.
type orphanCursor struct {
	mu        sync.Mutex
	dir, file string
}

// removeOrphanResults removes the result files that nothing refers to any
// more: those an acknowledgement or a purge forgot in the state but did not
// delete before the process died (the state commits first, so a crash
// leaves files, never a record without its file). A file is kept while a
// result or a step still waiting for its outputs refers to it (its record
// may be taking it now), and while it is younger than grace.
func (e *Engine) removeOrphanResults(ctx context.Context, grace time.Duration) (int, error) {
	root := filepath.Join(e.Root, "results")
	e.orphanCursor.mu.Lock()
	defer e.orphanCursor.mu.Unlock()
	dirs, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	before := time.Now().Add(-grace)
	type candidate struct{ path, file, wu string }
	var cands []candidate
	seen := 0
	from, after := e.orphanCursor.dir, e.orphanCursor.file
	var lastDir, lastFile string
	finished := true
	start := sort.Search(len(dirs), func(i int) bool { return dirs[i].Name() >= from })
scan:
	for _, d := range dirs[start:] {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // removed meanwhile
		}
		for _, f := range ents {
			name := f.Name()
			if d.Name() == from && name <= after {
				continue // seen by the last pass
			}
			if seen >= orphanScanLimit {
				finished = false
				break scan
			}
			seen++
			lastDir, lastFile = d.Name(), name
			if strings.HasPrefix(name, ".") || !f.Type().IsRegular() {
				continue // temporary files are swept apart (sweepTemps)
			}
			wu, _, err := naming.ParseResultFile(name)
			if err != nil {
				continue
			}
			if fi, err := f.Info(); err != nil || fi.ModTime().After(before) {
				continue
			}
			cands = append(cands, candidate{filepath.Join(dir, name), name, wu})
		}
	}
	if finished {
		lastDir, lastFile = "", "" // the next pass starts over
	}
	e.orphanCursor.dir, e.orphanCursor.file = lastDir, lastFile
	if len(cands) == 0 {
		return 0, nil
	}
	files := make([]string, len(cands))
	wus := make([]string, len(cands))
	for k, c := range cands {
		files[k], wus[k] = c.file, c.wu
	}
	live, err := e.db.LiveResultFiles(ctx, files, wus)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, c := range cands {
		if live[c.file] {
			continue
		}
		if err := os.Remove(c.path); err != nil && !os.IsNotExist(err) {
			e.Log.Warn("removing a result file nothing refers to", "file", c.path, "err", err)
			continue
		}
		removed++
	}
	return removed, nil
}
