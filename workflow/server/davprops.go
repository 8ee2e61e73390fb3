package server

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"os"
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
	buf := make([]byte, maxPropsBytes)
	n, err := unix.Fgetxattr(int(f.Fd()), propsXattr, buf)
	if errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP) {
		return map[xml.Name]webdav.Property{}, nil
	}
	if err != nil {
		return nil, err
	}
	var stored []storedProp
	if err := json.Unmarshal(buf[:n], &stored); err != nil {
		return nil, err
	}
	out := make(map[xml.Name]webdav.Property, len(stored))
	for _, p := range stored {
		name := xml.Name{Space: p.Space, Local: p.Local}
		out[name] = webdav.Property{XMLName: name, Lang: p.Lang, InnerXML: []byte(p.InnerXML)}
	}
	return out, nil
}

// patchProps applies PROPPATCH's changes all or nothing, as RFC 4918 wants.
func patchProps(f fder, patches []webdav.Proppatch) ([]webdav.Propstat, error) {
	props, err := readProps(f)
	if err != nil {
		return nil, err
	}
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
	case len(stored) == 0:
		if err := unix.Fremovexattr(int(f.Fd()), propsXattr); err != nil && !errors.Is(err, unix.ENODATA) {
			return nil, err
		}
	default:
		if err := unix.Fsetxattr(int(f.Fd()), propsXattr, b, 0); err != nil {
			if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.E2BIG) && !errors.Is(err, unix.ENOTSUP) {
				return nil, err
			}
			status = http.StatusInsufficientStorage
		}
	}
	return []webdav.Propstat{{Status: status, Props: names}}, nil
}

// propFile is a file or collection opened for reading, with its dead
// properties.
type propFile struct{ *os.File }

func (f propFile) DeadProps() (map[xml.Name]webdav.Property, error) { return readProps(f.File) }
func (f propFile) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(f.File, p)
}

// A file being written (PUT, COPY) takes the properties COPY gives it on
// its temporary inode, which the rename keeps.
func (s *stagingFile) DeadProps() (map[xml.Name]webdav.Property, error) { return readProps(s.tmp) }
func (s *stagingFile) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(s.tmp, p)
}
