package standin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rboinc/rboinc/internal/boinc"
)

// PrepareFanout makes the fan-out directories of the stand-in's download
// hierarchy, "0" to the hex of fanout-1, which create_work and the staging
// of contents would otherwise make one at a time as contents arrive: on
// ext4 a directory is a new inode, dearer than a file, and a first
// submission of a thousand contents made some six hundred of them on its
// way. It does nothing for a project that is not the stand-in (a real
// project's hierarchy is BOINC's), and is cheap once done: the last
// directory is made last and looked at first.
//
// A running server calls it, not InitProject: a thousand directories cost
// every project made and removed (each test's) a tenth of a second or more.
// It stops early, with ctx's error, when ctx ends.
func PrepareFanout(ctx context.Context, p *boinc.Project) error {
	if p.StandinScript == "" {
		return nil
	}
	if err := makeFanout(ctx, p.DownloadDir, p.Fanout); err != nil {
		return fmt.Errorf("making the download hierarchy of %s: %w", p.Dir, err)
	}
	return nil
}

// makeFanout makes the directories of a hierarchy of fanout under dir.
func makeFanout(ctx context.Context, dir string, fanout int) error {
	if fanout <= 0 {
		return nil
	}
	last := filepath.Join(dir, strconv.FormatUint(uint64(fanout-1), 16))
	if fi, err := os.Stat(last); err == nil && fi.IsDir() {
		return nil
	}
	for i := range fanout {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := os.Mkdir(filepath.Join(dir, strconv.FormatUint(uint64(i), 16)), 0o755)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
