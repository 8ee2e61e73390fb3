package pool

import (
	"os"
	"path/filepath"
)

// maxVerified bounds the uploads remembered as verified; past it they are
// all forgotten (and hashed again if they are ingested: only slower).
const maxVerified = 100000

// verifiedFile is an upload as it was when its content was checked: the
// same inode, unchanged since (size and both times), still has that MD5.
type verifiedFile struct {
	sum string
	Stamp
}

// Stamp is what makes a file the same, unchanged one: device, inode, size,
// and the modification and change times in nanoseconds (any write, rename
// or chmod moves the change time, which no one can set back).
type Stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// NoteVerified remembers that the file at path, which was written as the
// file whose fstat is written, has content sum: the writer checked it on
// the way. Nothing is noted when path no longer is that file. Ingest of
// that same, unchanged file then trusts the check instead of reading the
// file again. Only this process's notes count: another process (a CGI
// request) hashes as usual.
func (p *Pool) NoteVerified(path, sum string, written os.FileInfo) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, written) {
		return
	}
	id, ok := StampOf(fi)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.verified == nil || len(p.verified) >= maxVerified {
		p.verified = map[string]verifiedFile{}
	}
	p.verified[filepath.Clean(path)] = verifiedFile{sum: sum, Stamp: id}
}

// verifiedAs returns the MD5 noted for path when fi (its Lstat) is still
// the noted file, unchanged; "" otherwise. The note is used up either way.
func (p *Pool) verifiedAs(path string, fi os.FileInfo) string {
	path = filepath.Clean(path)
	p.mu.Lock()
	v, ok := p.verified[path]
	delete(p.verified, path)
	p.mu.Unlock()
	if !ok {
		return ""
	}
	if id, ok := StampOf(fi); !ok || id != v.Stamp {
		return ""
	}
	return v.sum
}
