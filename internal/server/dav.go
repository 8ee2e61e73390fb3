package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/webdav"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Bounds on scratch-area paths: far above what rboinc's clients use, far
// below what could hurt a file system.
const (
	maxDAVSegment = 255
	maxDAVPath    = 1024
)

// dav serves /DAV/<user>/... from the user's own scratch directory. Before
// golang.org/x/net/webdav sees a request it refuses: another user's prefix,
// unsafe path segments (also in a COPY or MOVE Destination), paths through
// symbolic links, and uploads over the size limits. Files are written
// through scratchFS: to a temporary name, put in place only when complete
// and, for a file named by an MD5, only when the content has that MD5.
func (s *Server) dav(w http.ResponseWriter, r *http.Request, u store.User) {
	rest := strings.TrimPrefix(r.URL.Path, wire.DAVPrefix)
	owner, sub, _ := strings.Cut(rest, "/")
	if naming.CheckUser(owner) != nil || !strings.EqualFold(owner, u.Name) {
		writeError(w, http.StatusForbidden, wire.CodeForbidden, "you may only use your own scratch area "+wire.DAVPrefix+u.Name+"/")
		return
	}
	if err := checkDAVPath(sub); err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, err.Error())
		return
	}
	root := s.E.DAVRoot(u)
	if err := os.MkdirAll(root, 0o755); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := noSymlinks(root, sub); err != nil {
		writeError(w, http.StatusForbidden, wire.CodeForbidden, err.Error())
		return
	}
	if r.Method == "PROPFIND" {
		if !checkPropfindDepth(w, r) {
			return
		}
		done, ok := s.davListing(w, r, u.Name, root, sub)
		defer done()
		if !ok {
			return
		}
	}
	switch r.Method {
	case "PROPFIND", "PROPPATCH", "LOCK":
		limit := int64(maxDAVBody)
		if r.Method == "LOCK" {
			limit = maxLockBody
		}
		if err := checkDAVXML(r, limit); err != nil {
			status, code := http.StatusBadRequest, wire.CodeBadRequest
			if errors.Is(err, errDAVBodyTooLarge) {
				status, code = http.StatusRequestEntityTooLarge, wire.CodeTooLarge
			}
			writeError(w, status, code, err.Error())
			return
		}
	}
	prefix := wire.DAVPrefix + owner
	lim := s.E.Cfg.Limits
	fsys := &scratchFS{root: root, maxFile: lim.MaxUploadBytes, pool: s.E.Pool}
	var put *putState
	var copied int64 // what a COPY brings, measured when the quota is on
	dst := ""
	switch r.Method {
	case "COPY", "MOVE":
		var err error
		dst, err = s.davDestination(r, prefix, root, u)
		if err != nil {
			writeError(w, http.StatusForbidden, wire.CodeForbidden, err.Error())
			return
		}
		r.Header.Set("Destination", (&url.URL{Path: prefix + "/" + dst}).EscapedPath())
		if r.Header.Get("Overwrite") == "" {
			// RFC 4918 10.6: absent means T (the library takes it as F
			// for MOVE).
			r.Header.Set("Overwrite", "T")
		}
		if r.Method == "COPY" && lim.MaxScratchBytes > 0 {
			used := s.scratch.used(root)
			add, _ := treeBytes(filepath.Join(root, filepath.FromSlash(sub)))
			copied = add
			if used+add > lim.MaxScratchBytes {
				writeError(w, http.StatusRequestEntityTooLarge, wire.CodeQuotaExceeded, fmt.Sprintf("your scratch area holds %d bytes; copying %d more would pass the limit of %d bytes", used, add, lim.MaxScratchBytes))
				return
			}
		}
		if r.Method == "COPY" {
			// Copied files are written like uploads: the same limits, the
			// same MD5 check, the same answer when refused.
			put = s.putLimits(root, 0)
		} else {
			put = &putState{}
		}
		r = r.WithContext(withPut(r.Context(), put))
		w = &putWriter{ResponseWriter: w, st: put}
	case "PROPPATCH":
		put = s.propsLimits(root)
		r = r.WithContext(withPut(r.Context(), put))
		w = &putWriter{ResponseWriter: w, st: put}
	case "MKCOL", "DELETE", "LOCK":
		// Writes too: a full disk is answered 507, not the library's 405.
		put = &putState{}
		r = r.WithContext(withPut(r.Context(), put))
		w = &putWriter{ResponseWriter: w, st: put}
	case "PUT":
		put = s.putLimits(root, r.ContentLength)
		if put.refused() {
			writeError(w, put.status, put.code, put.msg)
			return
		}
		r.Body = &bodyReader{r: http.MaxBytesReader(w, r.Body, put.limit), st: put}
		r = r.WithContext(withPut(r.Context(), put))
		w = &putWriter{ResponseWriter: w, st: put}
	}
	done, ok := s.davCreateLimits(w, r, u.Name, root, sub, dst)
	defer done()
	if !ok {
		return
	}
	locks, release := s.lockSystem(u.Name, fsys)
	defer release()
	name := "/" + sub
	ifh, ok := s.davConditions(w, r, prefix, root, name, "/"+dst, locks)
	if !ok {
		return
	}
	if ifh != nil {
		// Checked whole above; the library, which would evaluate it again
		// its own way (skipping a tag without a host name), is handed a
		// header that checkedLocks confirms.
		r.Header.Set("If", "(<"+checkedIf+">)")
	}
	if r.Method == "LOCK" {
		s.lock(w, r, prefix, name, ifh, fsys, locks)
		s.davWriteDone(w, r, put)
		return
	}
	h := &webdav.Handler{
		Prefix:     prefix,
		FileSystem: fsys,
		LockSystem: checkedLocks{locks},
		Logger: func(r *http.Request, err error) {
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				s.Log.Debug("webdav", "method", r.Method, "path", r.URL.Path, "err", err)
			}
		},
	}
	h.ServeHTTP(w, r)
	pw, _ := w.(*putWriter)
	done2xx := pw != nil && pw.code/100 == 2
	switch r.Method {
	case "PUT":
		if done2xx {
			s.scratch.add(root, charge(put.committed))
		}
	case "MKCOL":
		if done2xx {
			s.scratch.add(root, scratchMinCharge)
		}
	case "COPY", "PROPPATCH":
		// What they added is known (a copy's tree, the properties' growth);
		// what an overwrite or a removal took away is not.
		if grew := put.committed; done2xx {
			if r.Method == "COPY" {
				grew = copied
			}
			s.scratch.add(root, grew)
		}
		s.scratch.forget(root)
	case "DELETE", "MOVE":
		s.scratch.forget(root)
	}
	if done2xx && (r.Method == "DELETE" || r.Method == "MOVE") {
		locks.drop(name) // a resource gone takes its locks with it (RFC 4918 7.3)
	}
	s.davWriteDone(w, r, put)
}

// davDestination checks a COPY or MOVE Destination header: it must name a
// safe path inside the caller's own area. It returns that path relative to
// the area.
func (s *Server) davDestination(r *http.Request, prefix, root string, u store.User) (string, error) {
	d := r.Header.Get("Destination")
	if d == "" {
		return "", errors.New("COPY and MOVE need a Destination header")
	}
	du, err := url.Parse(d)
	if err != nil {
		return "", fmt.Errorf("Destination %q is not a URL", d)
	}
	if du.Host != "" && du.Host != r.Host {
		return "", fmt.Errorf("Destination %q is on another server", d)
	}
	rest, ok := strings.CutPrefix(du.Path, wire.DAVPrefix)
	owner, sub, _ := strings.Cut(rest, "/")
	if !ok || !strings.EqualFold(owner, u.Name) || !strings.EqualFold(owner, strings.TrimPrefix(prefix, wire.DAVPrefix)) {
		return "", fmt.Errorf("Destination %q is outside your own scratch area %s%s/", d, wire.DAVPrefix, u.Name)
	}
	if err := checkDAVPath(sub); err != nil {
		return "", fmt.Errorf("Destination: %w", err)
	}
	if sub == "" {
		return "", errors.New("Destination may not be the root of your scratch area")
	}
	if err := noSymlinks(root, sub); err != nil {
		return "", fmt.Errorf("Destination: %w", err)
	}
	return sub, nil
}

// checkDAVPath refuses scratch-area paths that could escape the area or
// confuse a file system or a web server: dot segments (also percent-encoded,
// as the path arrives decoded), hidden names, backslashes, control bytes,
// invalid UTF-8, empty segments and overlong names.
func checkDAVPath(sub string) error {
	if len(sub) > maxDAVPath {
		return fmt.Errorf("path is %d bytes long; at most %d are allowed", len(sub), maxDAVPath)
	}
	if !utf8.ValidString(sub) {
		return errors.New("path is not valid UTF-8")
	}
	if sub == "" {
		return nil
	}
	for _, seg := range strings.Split(strings.TrimSuffix(sub, "/"), "/") {
		switch {
		case seg == "":
			return fmt.Errorf("path %q has an empty segment", sub)
		case seg == "." || seg == "..":
			return fmt.Errorf("path %q has a %q segment: paths may not leave or walk around the scratch area", sub, seg)
		case strings.ContainsRune(seg, '\\'):
			return fmt.Errorf("name %q contains a backslash", seg)
		case strings.HasPrefix(seg, "."):
			return fmt.Errorf("name %q starts with '.': hidden names are not allowed", seg)
		case len(seg) > maxDAVSegment:
			return fmt.Errorf("a name in the path is %d bytes long; at most %d are allowed", len(seg), maxDAVSegment)
		}
		for _, c := range seg {
			if c < 0x20 || c == 0x7f {
				return fmt.Errorf("name %q contains a control character", seg)
			}
		}
	}
	return nil
}

// noSymlinks refuses a path (relative to root, slash-separated) when the
// root or any existing component is a symbolic link. Nothing a client does
// creates one; one placed there by other means must not lead out.
func noSymlinks(root, sub string) error {
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return errors.New("your scratch area is not a plain directory on the server; ask the administrator")
	}
	p := root
	for _, seg := range strings.Split(strings.Trim(sub, "/"), "/") {
		if seg == "" {
			continue
		}
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // not there (yet): nothing to follow
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link on the server: refused", path.Join(strings.Split(sub, "/")...))
		}
		if !fi.IsDir() {
			return nil
		}
	}
	return nil
}

// treeBytes is what the tree at p (p itself if it is a file) counts toward
// the scratch quota: each regular file and collection its size, at least
// scratchMinCharge, and the dead properties kept with it, without
// following symbolic links.
func treeBytes(p string) (int64, error) {
	var n int64
	err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		switch {
		case d.IsDir():
			n += scratchMinCharge + propsBytes(q)
		case d.Type().IsRegular():
			var size int64
			if fi, err := d.Info(); err == nil {
				size = fi.Size()
			}
			n += charge(size) + propsBytes(q)
		}
		return nil
	})
	return n, err
}

// submit is the engine's Submit; the submission took (and removed) an
// upload collection, so the scratch area is measured again next time.
func (s *Server) submit(ctx context.Context, u store.User, req wire.SubmitRequest) (wire.SubmitResponse, error) {
	defer s.scratch.forget(s.E.DAVRoot(u))
	return s.E.Submit(ctx, u, req)
}

// putLimits works out how many bytes a PUT may bring: the per-file limit
// and what is left of the user's scratch quota, whichever is smaller. A
// declared length over it is refused before anything is read.
func (s *Server) putLimits(root string, length int64) *putState {
	lim := s.E.Cfg.Limits
	st := &putState{limit: 1<<63 - 1}
	tooLarge := func() {
		st.status, st.code = http.StatusRequestEntityTooLarge, wire.CodeTooLarge
		st.msg = fmt.Sprintf("the upload is larger than this server accepts for one file (%d bytes, max_upload_bytes)", lim.MaxUploadBytes)
	}
	st.onLimit = tooLarge
	if lim.MaxUploadBytes > 0 {
		st.limit = lim.MaxUploadBytes
	}
	if lim.MaxScratchBytes > 0 {
		used := s.scratch.used(root)
		left := max(lim.MaxScratchBytes-used, 0)
		if left < scratchMinCharge {
			left = 0 // not even the least a file counts
		}
		if left < st.limit {
			st.limit = left
			st.onLimit = func() {
				st.status, st.code = http.StatusRequestEntityTooLarge, wire.CodeQuotaExceeded
				st.msg = fmt.Sprintf("your scratch area holds %d bytes and the limit is %d: this upload does not fit; submit or delete your pending uploads first", used, lim.MaxScratchBytes)
			}
		}
	}
	if length > st.limit {
		st.onLimit()
	}
	return st
}

// propsLimits bounds what a PROPPATCH may add to the user's scratch area:
// dead properties count in its quota.
func (s *Server) propsLimits(root string) *putState {
	st := &putState{limit: 1<<63 - 1}
	lim := s.E.Cfg.Limits
	if lim.MaxScratchBytes > 0 {
		used := s.scratch.used(root)
		st.limit = max(lim.MaxScratchBytes-used, 0)
		st.onLimit = func() {
			st.status, st.code = http.StatusRequestEntityTooLarge, wire.CodeQuotaExceeded
			st.msg = fmt.Sprintf("your scratch area holds %d bytes and the limit is %d: these properties do not fit; submit or delete your pending uploads first", used, lim.MaxScratchBytes)
		}
	}
	return st
}
