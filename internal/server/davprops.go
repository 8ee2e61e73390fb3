package server

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"os"
	"strings"
	"syscall"

	"golang.org/x/net/webdav"
	"golang.org/x/sys/unix"
)

// Dead properties (PROPPATCH) live with the file or collection itself, in
// an extended attribute: written durably with the inode, moved with it by
// rename, copied by COPY (webdav copies them through DeadPropsHolder), gone
// with it. rboinc itself uses none; WebDAV clients may.
const propsXattr = "user.rboinc.davprops"

// maxPropsBytes bounds one resource's dead properties, as stored.
const maxPropsBytes = 16 << 10

// storedProp is a dead property as kept in the attribute.
type storedProp struct {
	Space, Local, Lang string
	InnerXML           string `json:",omitempty"`
}

// fder is an open file whose descriptor carries the attribute.
type fder interface{ Fd() uintptr }

func readProps(f fder) (map[xml.Name]webdav.Property, error) {
	// Asked for its size first: most resources have none, and a listing of
	// many need not allocate the largest possible for each.
	n, err := unix.Fgetxattr(int(f.Fd()), propsXattr, nil)
	if errors.Is(err, errNoAttr) || errors.Is(err, unix.ENOTSUP) {
		return map[xml.Name]webdav.Property{}, nil
	}
	if err == nil {
		buf := make([]byte, n)
		n, err = unix.Fgetxattr(int(f.Fd()), propsXattr, buf)
		if errors.Is(err, unix.ERANGE) { // grown meanwhile
			buf = make([]byte, maxPropsBytes)
			n, err = unix.Fgetxattr(int(f.Fd()), propsXattr, buf)
		}
		if err == nil {
			return decodeProps(buf[:n])
		}
	}
	if errors.Is(err, errNoAttr) {
		return map[xml.Name]webdav.Property{}, nil // removed meanwhile
	}
	return nil, err
}

// decodeProps reads the stored form of dead properties.
func decodeProps(b []byte) (map[xml.Name]webdav.Property, error) {
	var stored []storedProp
	if err := json.Unmarshal(b, &stored); err != nil {
		return nil, err
	}
	out := make(map[xml.Name]webdav.Property, len(stored))
	for _, p := range stored {
		name := xml.Name{Space: p.Space, Local: p.Local}
		out[name] = webdav.Property{XMLName: name, Lang: p.Lang, InnerXML: []byte(p.InnerXML)}
	}
	return out, nil
}

// patchProps applies PROPPATCH's changes all or nothing, as RFC 4918 wants;
// put (nil for none) bounds how much the stored properties may grow.
func patchProps(f fder, patches []webdav.Proppatch, put *putState) ([]webdav.Propstat, error) {
	props, err := readProps(f)
	if err != nil {
		return nil, err
	}
	before, _ := unix.Fgetxattr(int(f.Fd()), propsXattr, nil)
	var names []webdav.Property
	for _, p := range patches {
		for _, prop := range p.Props {
			if p.Remove {
				delete(props, prop.XMLName)
			} else {
				props[prop.XMLName] = prop
			}
			names = append(names, webdav.Property{XMLName: prop.XMLName})
		}
	}
	stored := make([]storedProp, 0, len(props))
	for name, p := range props {
		stored = append(stored, storedProp{Space: name.Space, Local: name.Local, Lang: p.Lang, InnerXML: string(p.InnerXML)})
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	status := http.StatusOK
	switch {
	case len(b) > maxPropsBytes:
		status = http.StatusInsufficientStorage
	case put != nil && put.onLimit != nil && int64(len(b)-max(before, 0)) > put.limit:
		put.onLimit()
		status = http.StatusInsufficientStorage
	case len(stored) == 0:
		if err := unix.Fremovexattr(int(f.Fd()), propsXattr); err != nil && !errors.Is(err, errNoAttr) {
			put.writeFailed(err)
			return nil, err
		}
		put.grew(-int64(max(before, 0)))
	default:
		err := unix.Fsetxattr(int(f.Fd()), propsXattr, b, 0)
		switch {
		case err == nil:
			put.grew(int64(len(b) - max(before, 0)))
		case errors.Is(err, syscall.E2BIG), errors.Is(err, syscall.ENOSPC) && hasRoom(f):
			// More than the file system keeps with one file (ext4 says
			// ENOSPC then, with its disk far from full).
			status = http.StatusInsufficientStorage
		default:
			put.writeFailed(err)
			return nil, err
		}
	}
	return []webdav.Propstat{{Status: status, Props: names}}, nil
}

// hasRoom tells whether f's file system has a mebibyte free, so that an
// ENOSPC from it is about one file's limit, not a full disk.
func hasRoom(f fder) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(int(f.Fd()), &st) == nil && int64(st.Bavail)*int64(st.Bsize) >= 1<<20
}

// propFile is a file or collection opened for reading, with its dead
// properties.
type propFile struct {
	*os.File
	put *putState // the request's, for PROPPATCH's limit
}

func (f propFile) DeadProps() (map[xml.Name]webdav.Property, error) { return readProps(f.File) }
func (f propFile) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(f.File, p, f.put)
}

// Readdir lists a collection without the hidden names (uploads still
// being written, kept under a temporary dot-name).
func (f propFile) Readdir(n int) ([]os.FileInfo, error) {
	all, err := f.File.Readdir(n)
	out := all[:0]
	for _, fi := range all {
		if !strings.HasPrefix(fi.Name(), ".") {
			out = append(out, fi)
		}
	}
	return out, err
}

// A file being written (PUT, COPY) takes the properties COPY gives it on
// its temporary inode, which the rename keeps.
func (s *stagingFile) DeadProps() (map[xml.Name]webdav.Property, error) { return readProps(s.tmp) }
func (s *stagingFile) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(s.tmp, p, nil) // COPY: counted before it started
}

// keepProps gives file to the dead properties of file from, when it has
// none of its own: a new content put in place of an old one keeps them.
func keepProps(from, to string) error {
	buf := make([]byte, maxPropsBytes)
	n, err := unix.Lgetxattr(from, propsXattr, buf)
	if err != nil {
		return nil // none (or from is not there): nothing to keep
	}
	if _, err := unix.Lgetxattr(to, propsXattr, nil); err == nil {
		return nil
	}
	return unix.Lsetxattr(to, propsXattr, buf[:n], 0)
}

// propsBytes is the size of the dead properties stored on p, counted in
// the user's scratch quota.
func propsBytes(p string) int64 {
	n, err := unix.Lgetxattr(p, propsXattr, nil)
	if err != nil {
		return 0
	}
	return int64(n)
}

// grew records that a PROPPATCH changed the stored properties by n bytes,
// for the scratch figure (scratchCache).
func (p *putState) grew(n int64) {
	if p != nil {
		p.committed += n
	}
}
