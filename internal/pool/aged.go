package pool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// A pool file is written before the row of the pool's index that names it
// (the bytes come first): a process killed in between leaves a file no row
// names, which collection, walking the rows, would never find. Collection
// therefore also looks for files untouched for long (Aged) that no row
// names; Touch keeps a content found in the directory, and about to be
// used and recorded, out of its reach.

// Touch tells whether content sum is present and, if so, marks it as just
// wanted (its modification time: the file's bytes never change).
func (p *Pool) Touch(sum string) bool {
	if err := markWanted(p.Path(sum)); err != nil {
		// A file of another owner (a result BOINC's upload handler wrote,
		// linked in) cannot be marked; present all the same.
		return errors.Is(err, fs.ErrPermission) && p.Has(sum)
	}
	return p.Has(sum)
}

// Aged lists the contents whose file was neither changed, linked, moved nor
// touched since before.
func (p *Pool) Aged(before time.Time) ([]string, error) {
	var out []string
	shards, err := os.ReadDir(p.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(p.Dir, sh.Name()))
		if err != nil {
			return out, err
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !ValidMD5(e.Name()) || e.Name()[:2] != sh.Name() {
				continue
			}
			if p.AgedSince(e.Name(), before) {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}

// AgedSince tells whether content sum's file is present and unchanged
// since before (see Aged).
func (p *Pool) AgedSince(sum string, before time.Time) bool {
	fi, err := os.Lstat(p.Path(sum))
	return err == nil && fi.Mode().IsRegular() && lastChange(fi).Before(before)
}
