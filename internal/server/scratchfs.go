package server

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/net/webdav"

	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/workflow/wire"
)

// scratchFS is one user's scratch directory as a webdav.FileSystem. Unlike
// webdav.Dir it refuses paths through symbolic links, and it writes files
// to a temporary name that becomes the real one only when the whole content
// arrived within the size limit (and, for a name that is an MD5, has that
// MD5): a cut-off or refused upload leaves nothing behind.
type scratchFS struct {
	root    string
	maxFile int64      // per-file limit for writes without a PUT's own limit (COPY); 0: none
	pool    *pool.Pool // told of each file whose MD5 name was checked, so it need not hash it again
}

var errSymlink = errors.New("symbolic links are not followed in the scratch area")

// resolve maps a webdav name (slash-separated, rooted) into the directory
// and checks no component on the way is a symbolic link.
func (f *scratchFS) resolve(name string) (string, error) {
	if strings.ContainsAny(name, "\x00\\") {
		return "", os.ErrNotExist
	}
	clean := path.Clean("/" + name)
	if err := noSymlinks(f.root, clean); err != nil {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: errSymlink}
	}
	// The final component too: noSymlinks stops at a non-directory.
	p := filepath.Join(f.root, filepath.FromSlash(clean))
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: errSymlink}
	}
	return p, nil
}

func (f *scratchFS) isRoot(p string) bool { return filepath.Clean(p) == filepath.Clean(f.root) }

func (f *scratchFS) Mkdir(ctx context.Context, name string, perm os.FileMode) error {
	p, err := f.resolve(name)
	if err != nil {
		return err
	}
	return noteWriteErr(ctx, os.Mkdir(p, 0o755))
}

func (f *scratchFS) OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (webdav.File, error) {
	p, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	// webdav writes content only with O_CREATE (PUT, COPY); other opens
	// for writing (PROPPATCH) need no write access to the content.
	if flag&os.O_CREATE == 0 {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		return propFile{f, putOf(ctx)}, nil
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a collection")}
	}
	dir := filepath.Dir(p)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	tmp, err := os.CreateTemp(dir, ".rboinc-put-*")
	if err != nil {
		return nil, noteWriteErr(ctx, err)
	}
	sf := &stagingFile{tmp: tmp, target: p, h: md5.New(), limit: f.maxFile, put: putOf(ctx), pool: f.pool}
	if sf.put != nil {
		sf.limit = sf.put.limit
	}
	return sf, nil
}

func (f *scratchFS) RemoveAll(ctx context.Context, name string) error {
	p, err := f.resolve(name)
	if err != nil {
		return err
	}
	if f.isRoot(p) {
		return os.ErrInvalid
	}
	return noteWriteErr(ctx, os.RemoveAll(p))
}

func (f *scratchFS) Rename(ctx context.Context, oldName, newName string) error {
	op, err := f.resolve(oldName)
	if err != nil {
		return err
	}
	np, err := f.resolve(newName)
	if err != nil {
		return err
	}
	if f.isRoot(op) || f.isRoot(np) {
		return os.ErrInvalid
	}
	return noteWriteErr(ctx, os.Rename(op, np))
}

func (f *scratchFS) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	p, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

// stagingFile is a file being written: a temporary file, hashed as it
// grows, renamed over the target on a successful Close.
type stagingFile struct {
	tmp    *os.File
	target string
	h      hash.Hash
	n      int64
	limit  int64 // 0: none
	err    error // the first write failure: the content is incomplete
	put    *putState
	pool   *pool.Pool
}

var errTooLarge = errors.New("upload too large")

func (s *stagingFile) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.limit > 0 && s.n+int64(len(b)) > s.limit {
		s.err = errTooLarge
		if s.put != nil {
			s.put.onLimit()
		}
		return 0, s.err
	}
	n, err := s.tmp.Write(b)
	s.h.Write(b[:n])
	s.n += int64(n)
	if err != nil {
		s.err = err
		s.put.writeFailed(err)
	}
	return n, err
}

func (s *stagingFile) Close() error {
	name := s.tmp.Name()
	written, serr := s.tmp.Stat()
	err := s.tmp.Close()
	s.put.writeFailed(err) // a delayed write error (NFS, a full disk)
	if s.err != nil {
		err = s.err
	} else if s.put != nil && s.put.bodyErr != nil {
		err = s.put.bodyErr
	}
	want := filepath.Base(s.target)
	verified := false
	if err == nil {
		if pool.ValidMD5(want) {
			verified = true
			if got := hex.EncodeToString(s.h.Sum(nil)); got != want {
				verified = false
				err = fmt.Errorf("content has MD5 %s, not the %s its name announces", got, want)
				if s.put != nil {
					s.put.status, s.put.code = http.StatusBadRequest, wire.CodeBadRequest
					s.put.msg = "upload refused: the " + err.Error()
				}
			}
		}
	}
	if err == nil {
		os.Chmod(name, 0o644)
		// A PUT replaces the content, not the dead properties.
		err = keepProps(s.target, name)
		if err == nil {
			err = os.Rename(name, s.target)
		}
		s.put.writeFailed(err)
		if err == nil && s.put != nil {
			s.put.committed += s.n
		}
		if err == nil && verified && serr == nil && s.pool != nil {
			s.pool.NoteVerified(s.target, want, written)
		}
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// Reading back a file being written is not needed by webdav's PUT or COPY.
func (s *stagingFile) Read([]byte) (int, error)           { return 0, fs.ErrInvalid }
func (s *stagingFile) Seek(int64, int) (int64, error)     { return 0, fs.ErrInvalid }
func (s *stagingFile) Readdir(int) ([]os.FileInfo, error) { return nil, fs.ErrInvalid }
func (s *stagingFile) Stat() (os.FileInfo, error)         { return s.tmp.Stat() }

// putState follows one PUT: its byte limit and, when it is refused, the
// answer to give instead of webdav's.
type putState struct {
	limit     int64
	onLimit   func() // sets the refusal for passing limit
	bodyErr   error  // reading the request body failed: the content is incomplete
	committed int64  // bytes of the file put in place
	status    int
	code      string
	msg       string
	full      bool   // refused for want of disk space
	failed    error  // the file system's error, when it refused a write
	reqID     string // a 500's request id, logged with failed
}

func (p *putState) refused() bool { return p.status != 0 }

type putKey struct{}

func withPut(ctx context.Context, p *putState) context.Context {
	return context.WithValue(ctx, putKey{}, p)
}

func putOf(ctx context.Context) *putState {
	p, _ := ctx.Value(putKey{}).(*putState)
	return p
}

// bodyReader notes a failed read of the request body (the limit of
// http.MaxBytesReader, or a client gone mid-upload).
type bodyReader struct {
	r  io.ReadCloser
	st *putState
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.st.bodyErr == nil {
		b.st.bodyErr = err
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			b.st.onLimit()
		}
	}
	return n, err
}

func (b *bodyReader) Close() error { return b.r.Close() }

// putWriter drops webdav's own answer to a PUT that was refused, so that
// the refusal can be written instead.
type putWriter struct {
	http.ResponseWriter
	st        *putState
	swallowed bool
	wrote     bool // an answer went out
	code      int  // its status
}

func (p *putWriter) WriteHeader(code int) {
	if p.st.refused() {
		p.swallowed = true
		return
	}
	p.wrote, p.code = true, code
	p.ResponseWriter.WriteHeader(code)
}

func (p *putWriter) Write(b []byte) (int, error) {
	if p.swallowed || !p.wrote && p.st.refused() {
		p.swallowed = true
		return len(b), nil
	}
	p.wrote = true
	return p.ResponseWriter.Write(b)
}

// etag is the entity tag the WebDAV library gives a file: its modification
// time and size in hex, as Apache does ("" for a collection or none).
func (f *scratchFS) etag(name string) string {
	p, err := f.resolve(name)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return ""
	}
	return fmt.Sprintf(`"%x%x"`, fi.ModTime().UnixNano(), fi.Size())
}
