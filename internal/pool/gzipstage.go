package pool

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/fsync"
)

// StageGzip makes the compressed copy BOINC serves for an input whose
// <file_info> has <gzip/>: name.gz beside staged download name, as
// BOINC's stage_file --gzip does (create_work refuses the work unit
// without it, "missing gzip file"; the client downloads it and
// decompresses). The names are content-derived, so a .gz there already is
// kept. It is written whole through a temporary name (swept as one of
// rboinc's, see IsDownloadTempName) and synced with its directory: BOINC
// may hand the work unit out before any later sync.
func StageGzip(proj *boinc.Project, name string) error {
	src := proj.DownloadPath(name)
	dst := src + ".gz"
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("compressing input %s for its <gzip/> download: %w", name, err)
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return fmt.Errorf("compressing input %s for its <gzip/> download: %w", name, err)
	}
	tmp := out.Name()
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsync.Data(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err == nil {
		err = fsync.Dir(filepath.Dir(dst))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compressing input %s for its <gzip/> download: %w", name, err)
	}
	return nil
}

// removeStaged removes a download name's file, its sidecar and its
// compressed copy (StageGzip), if any.
func removeStaged(path string) {
	os.Remove(path + ".md5")
	os.Remove(path + ".gz")
	os.Remove(path)
}
