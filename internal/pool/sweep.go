package pool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// IsTempName reports whether a file name is one of the temporary names
// rboinc's atomic writes use beside their destination (a hidden name with
// a temporary marker): what a crash between creating and renaming leaves.
func IsTempName(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	return strings.HasSuffix(name, tempSuffix) || strings.Contains(name, ".tmp") ||
		strings.HasPrefix(name, ".in") || strings.HasPrefix(name, ".linkcheck")
}

// SweepTemps removes the temporary files older than before under dir, to
// depth levels of subdirectories (a shard or group directory is depth 1),
// keeping to names that match (nil: IsTempName). It returns how many it
// removed. An operation in progress is never touched: its temporary file
// is younger than before.
func SweepTemps(dir string, depth int, before time.Time, match func(string) bool) (int, error) {
	if match == nil {
		match = IsTempName
	}
	n := 0
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir() && depth > 0 && !strings.HasPrefix(e.Name(), "."):
			k, err := SweepTemps(p, depth-1, before, match)
			n += k
			if err != nil {
				return n, err
			}
		case e.Type().IsRegular() && match(e.Name()):
			fi, err := e.Info()
			if err != nil || !fi.ModTime().Before(before) {
				continue
			}
			if os.Remove(p) == nil {
				n++
			}
		}
	}
	return n, nil
}
