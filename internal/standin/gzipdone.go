package standin

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// gzipInPlace compresses a finished output as the client does for a
// <file_info> with <gzip_when_done/> (FILE_INFO::gzip): into path.gz, which
// then replaces path, so the file keeps its name and is uploaded, sized and
// hashed compressed.
func gzipInPlace(path string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path + ".gz"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compressing output %s (gzip_when_done): %w", path, err)
	}
	return nil
}
