package wucreate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

// stagedFile is an input file as create_work found it in the download hierarchy.
type stagedFile struct {
	path   string
	md5    string
	nbytes int64
}

// hierPath is dir_hier_path with create=true: like BOINC it makes the hash
// directory even when the file then turns out to be missing.
func hierPath(p *boinc.Project, name string) string {
	path := boinc.HierPath(p.DownloadDir, name, p.Fanout)
	if p.Fanout > 0 {
		os.MkdirAll(filepath.Dir(path), 0o755) // BOINC ignores the result too
	}
	return path
}

// stageVarInput locates (or copies from the top of download/) a variable
// input file and gets its MD5 and size, printing what create_work prints.
// With sidecars set (native creation: rboinc staged the file and wrote its
// sidecar) the sidecar is read as BOINC reads its MD5 cache, whether or not
// the project caches: the file's name is its MD5 already.
func stageVarInput(p *boinc.Project, name string, sidecars bool, stdout, stderr io.Writer) (stagedFile, int) {
	if sidecars {
		// The common case first, with the fewest system calls: the file
		// and a sidecar no older than it in place (what got_md5_info
		// accepts); anything else goes the long way below.
		path := boinc.HierPath(p.DownloadDir, name, p.Fanout)
		if sum, n, ok := boinc.ReadSidecar(path); ok {
			return stagedFile{path, sum, n}, 0
		}
	}
	path := hierPath(p, name)
	if !fileExists(path) {
		top := p.DownloadDir + "/" + name
		copyFile(top, path) // BOINC reports the copy whether or not it worked
		fmt.Fprintf(stdout, "copy %s to %s\n", top, path)
	}
	if p.CacheMD5 || sidecars {
		if sum, n, ok := gotMD5Info(path, stderr); ok {
			return stagedFile{path, sum, n}, 0
		}
	}
	sum, n, err := md5sum.File(path)
	if err != nil {
		fmt.Fprintf(stderr, "md5_file: can't open %s\n", path)
		fmt.Fprintf(stderr, "md5_file: %s\n", strerror(err))
		fmt.Fprintf(stderr, "process_input_template: md5_file %s\n", BoincError(errFopen))
		return stagedFile{}, errFopen
	}
	if p.CacheMD5 && !fileExists(path+".md5") {
		boinc.WriteSidecar(path, sum, n) // a failed cache write is not an error in BOINC
	}
	return stagedFile{path, sum, n}, 0
}

// stageConstInput handles a <file_info> with <physical_name>: the file and a
// valid .md5 sidecar must already be there.
func stageConstInput(p *boinc.Project, name string, stderr io.Writer) (stagedFile, int) {
	path := hierPath(p, name)
	sum, n, ok := gotMD5Info(path, stderr)
	if !ok {
		fmt.Fprintf(stderr, "missing MD5 info file for %s\n", name)
		return stagedFile{}, errFileMissing
	}
	return stagedFile{path, sum, n}, 0
}

// gotMD5Info is BOINC's got_md5_info: a sidecar older than its file is
// deleted; a malformed one is reported and left alone.
func gotMD5Info(path string, stderr io.Writer) (string, int64, bool) {
	dfi, err := os.Stat(path)
	if err != nil {
		return "", 0, false
	}
	sfi, err := os.Stat(path + ".md5")
	if err != nil {
		return "", 0, false
	}
	if sum, n, ok := boinc.ReadSidecar(path); ok {
		return sum, n, true
	}
	if sfi.ModTime().Unix() < dfi.ModTime().Unix() {
		os.Remove(path + ".md5")
	} else {
		fmt.Fprintf(stderr, "bad MD5 cache file %s.md5; remove it and stage file again\n", path)
	}
	return "", 0, false
}

// strerror renders an error's errno the way C's perror does.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			r := []rune(s)
			r[0] = unicode.ToUpper(r[0])
			return string(r)
		}
	}
	return err.Error()
}

// BadPhysicalName refuses names that would leave the download hierarchy.
// BOINC does not check; the stand-in does, to catch such bugs in rboinc.
func BadPhysicalName(name string) bool {
	return name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00")
}
