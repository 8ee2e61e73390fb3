package pool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// shardNames are the 256 directories of the pool, "00" to "ff": the first
// two hex digits of the contents they hold.
var shardNames = func() []string {
	s := make([]string, 256)
	for i := range s {
		s[i] = fmt.Sprintf("%02x", i)
	}
	return s
}()

// Prepare makes the pool directory and its 256 shard directories. A new
// directory costs a new inode, which on ext4 is dearer than a new file, so
// a first submission of many contents should not make them one by one on
// its way: a running server calls it when it starts. It is cheap once
// done (one stat: "ff" is made last) and safe to call from several
// processes at once. The writers still make a missing directory
// themselves.
func (p *Pool) Prepare() error {
	if fi, err := os.Stat(filepath.Join(p.Dir, shardNames[255])); err == nil && fi.IsDir() {
		return nil
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return fmt.Errorf("making the content pool %s: %w", p.Dir, err)
	}
	for _, name := range shardNames {
		if err := os.Mkdir(filepath.Join(p.Dir, name), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("making the content pool's directory %s: %w", name, err)
		}
	}
	return nil
}
