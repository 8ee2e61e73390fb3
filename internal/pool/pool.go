package pool

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

var md5RE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidMD5 reports whether s is 32 lowercase hex digits.
func ValidMD5(s string) bool { return md5RE.MatchString(s) }

// Pool is a directory of contents named by MD5: <dir>/<first two hex>/<md5>.
type Pool struct {
	Dir string
	// NoSidecars makes Stage write no .md5 sidecars, nor read those there:
	// for native creation, which is handed each staged input's MD5 and
	// size by rboinc and reads no sidecar. A sidecar is BOINC's cache, not
	// its record: create_work (configured back, or run by hand) computes
	// the MD5 of an input that has none, and Stage without NoSidecars
	// writes it at the content's next staging. A first submission staging
	// 2,000 contents so makes 2,000 files fewer.
	NoSidecars bool

	mu       sync.Mutex
	verified map[string]verifiedFile // see NoteVerified
}

// Path is where a content lives.
func (p *Pool) Path(sum string) string { return filepath.Join(p.Dir, sum[:2], sum) }

// Has reports whether the content is present.
func (p *Pool) Has(sum string) bool {
	fi, err := os.Stat(p.Path(sum))
	return err == nil && fi.Mode().IsRegular()
}

// Ingest moves an uploaded file into the pool after checking that its
// content has the announced MD5. The file must be a regular file (not a
// symlink). It returns the size. The file is moved out of the uploader's
// reach first and checked there, so that nothing can change it between the
// check and its arrival under its name; a file that fails the check is
// removed. A file this process verified as it was written (see
// NoteVerified), and that is still that very file unchanged, is not read
// again.
func (p *Pool) Ingest(src, want string) (int64, error) {
	if !ValidMD5(want) {
		return 0, fmt.Errorf("%q is not an MD5 checksum", want)
	}
	_, n, err := p.ingest(src, want)
	return n, err
}

// IngestAny moves a file into the pool under whatever MD5 its content has
// (read once, after the move) and returns that MD5 and the size: a file of
// the original protocol, named by parameter rather than by content.
func (p *Pool) IngestAny(src string) (string, int64, error) {
	return p.ingest(src, "")
}

// ingest is Ingest, and IngestAny when want is empty.
func (p *Pool) ingest(src, want string) (string, int64, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("upload %s is not a regular file", filepath.Base(src))
	}
	trusted := want != "" && p.verifiedAs(src, fi) == want
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return "", 0, err
	}
	// Beside the pool's directories, not in the content's: it may not be
	// known yet.
	tmp := filepath.Join(p.Dir, ".in"+strconv.FormatUint(rand.Uint64(), 36))
	var got string
	var n int64
	err = os.Rename(src, tmp)
	switch {
	case err == nil:
		moved, lerr := os.Lstat(tmp)
		if trusted && lerr == nil && os.SameFile(fi, moved) && moved.Size() == fi.Size() {
			got, n = want, moved.Size()
		} else {
			got, n, err = md5sum.File(tmp)
		}
	case errors.Is(err, syscall.EXDEV):
		got, n, err = CopyAtomic(src, tmp, 0o444)
		if err == nil {
			os.Remove(src)
		}
	default:
		return "", 0, fmt.Errorf("moving upload into the pool: %w", err)
	}
	if err == nil && want != "" && got != want {
		err = fmt.Errorf("upload %s: content has MD5 %s, not the announced %s", filepath.Base(src), got, want)
	}
	if err == nil && p.Touch(got) {
		// The pool has it: keep its file (BOINC may hold links to it),
		// touched so that collection leaves it to the caller to record.
		os.Remove(tmp)
		return got, n, nil
	}
	if err == nil {
		dropUserAttrs(tmp) // WebDAV properties stay with the user's scratch area
		err = os.Chmod(tmp, 0o444)
	}
	if err == nil {
		// New to the pool now, whatever time its sender gave it: off
		// Linux, collection of files no row names reads only this one.
		t := time.Now()
		err = os.Chtimes(tmp, t, t)
	}
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(p.Path(got)), 0o755); err == nil {
			err = os.Rename(tmp, p.Path(got))
		}
	}
	if err != nil {
		os.Remove(tmp)
		return "", 0, err
	}
	return got, n, nil
}

// Adopt adds an existing file (e.g. a result just copied out of BOINC) to
// the pool under its known MD5, by hard link where possible.
func (p *Pool) Adopt(src, sum string) error {
	if p.Touch(sum) { // kept from collection until the caller records it
		return nil
	}
	dst := p.Path(sum)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return linkOrCopy(src, dst)
}

// WriteContent stores data read from r, returning its MD5 and size.
func (p *Pool) WriteContent(r io.Reader) (string, int64, error) {
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return "", 0, err
	}
	f, err := os.CreateTemp(p.Dir, ".in*")
	if err != nil {
		return "", 0, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if p.Touch(sum) { // kept from collection until the caller records it
		return sum, n, nil
	}
	os.Chmod(tmp, 0o444)
	if err := os.MkdirAll(filepath.Dir(p.Path(sum)), 0o755); err != nil {
		return "", 0, err
	}
	return sum, n, os.Rename(tmp, p.Path(sum))
}

// Remove deletes a content from the pool.
func (p *Pool) Remove(sum string) error {
	err := os.Remove(p.Path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Stage makes content sum available to BOINC: a hard link (a copy across
// file systems) at the download hierarchy path of PhysicalName(sum) and its
// .md5 sidecar (none with NoSidecars). It is idempotent and never replaces a name with other content.
func (p *Pool) Stage(proj *boinc.Project, sum string, size int64) (string, error) {
	name := PhysicalName(sum)
	dst := proj.DownloadPath(name)
	// The usual case is a content not staged yet: link it straight to its
	// name (a link appears whole), one system call where a temporary name
	// and a rename would take three.
	err := os.Link(p.Path(sum), dst)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(p.Path(sum)); serr != nil {
			return "", fmt.Errorf("staging %s: content %s is gone from the pool: %w", name, sum, serr)
		}
		if err = os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("staging %s: %w", name, err)
		}
		err = os.Link(p.Path(sum), dst)
	}
	switch {
	case err == nil:
		if p.NoSidecars {
			return name, nil
		}
		// A new link: its sidecar is written in place, as no job reads it
		// before Stage returns.
		if err := boinc.CreateSidecar(dst, sum, size); !errors.Is(err, fs.ErrExist) {
			return name, err
		}
		return name, keepSidecar(dst, sum, size)
	case errors.Is(err, os.ErrExist):
		if fi, serr := os.Stat(dst); serr == nil && fi.Size() == size {
			if p.NoSidecars {
				return name, nil
			}
			return name, keepSidecar(dst, sum, size)
		}
	case !unlinkable(err):
		return "", fmt.Errorf("staging %s into the download hierarchy: %w", name, err)
	}
	// Across file systems, or a damaged file under the name: put a good
	// copy in place atomically.
	if err := linkOrCopy(p.Path(sum), dst); err != nil {
		return "", fmt.Errorf("staging %s into the download hierarchy: %w", name, err)
	}
	if p.NoSidecars {
		return name, nil
	}
	return name, boinc.WriteSidecar(dst, sum, size)
}

// keepSidecar keeps the sidecar of staged file dst when it tells its content
// (a sidecar a crash cut short does not) and replaces it atomically when it
// does not.
func keepSidecar(dst, sum string, size int64) error {
	if got, n, ok := boinc.ReadSidecar(dst); ok && got == sum && n == size {
		return nil
	}
	return boinc.WriteSidecar(dst, sum, size)
}

// Unstage removes a content's download links, sidecars and compressed
// copies: its name, and
// the name work units made before rboinc had a namespace of its own use
// (LegacyPhysicalName) when that file is rboinc's own link of the pool's
// content and keepLegacy is false; a jf_ file that is not (BOINC's
// job-file staging gave it, or a copy whose origin cannot be told) is left
// to whoever made it. keepLegacy is for a link BOINC's job-file staging
// found and uses for batches of its own (see LegacyLink).
func (p *Pool) Unstage(proj *boinc.Project, sum string, keepLegacy bool) {
	removeStaged(proj.DownloadPath(PhysicalName(sum)))
	if keepLegacy {
		return
	}
	if name, ok := p.LegacyLink(proj, sum); ok {
		removeStaged(proj.DownloadPath(name))
	}
}

// LegacyLink is content sum's download name of work units made before
// rboinc had a namespace of its own; ok tells whether that file is
// rboinc's own link of the pool's content.
func (p *Pool) LegacyLink(proj *boinc.Project, sum string) (name string, ok bool) {
	name = LegacyPhysicalName(sum)
	return name, p.isLinkOf(proj.DownloadPath(name), sum)
}

// isLinkOf tells whether path is a hard link of content sum's pool file.
func (p *Pool) isLinkOf(path, sum string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	pf, err := os.Stat(p.Path(sum))
	return err == nil && os.SameFile(fi, pf)
}

// linkOrCopy puts src at dst atomically: hard link to a temporary name
// beside dst, then rename; across file systems, a streamed copy.
func linkOrCopy(src, dst string) error {
	tmp, err := linkTemp(src, dst)
	if err != nil {
		if !unlinkable(err) {
			return err
		}
		_, _, err := CopyAtomic(src, dst, 0o444)
		return err
	}
	return publish(tmp, dst)
}

// CopyAtomic streams src to dst through a temporary file in dst's directory,
// hashing on the way, and renames it into place. It returns MD5 and size.
func CopyAtomic(src, dst string, perm os.FileMode) (string, int64, error) {
	return atomicfile.Copy(src, dst, perm)
}
