package engine

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
)

// A resumable upload is one content sent into an upload collection in
// pieces: each piece is appended to a hidden partial file at the offset the
// server reports, and the partial takes the content's name once it is
// whole and has that MD5. A transfer cut short goes on where it stopped
// instead of starting over.

// partialPrefix names a content still arriving in an upload collection.
const partialPrefix = ".part-"

// UploadPart is where a resumable upload stands.
type UploadPart struct {
	Dir      string // the upload collection
	Have     int64  // bytes the server holds
	Complete bool   // the content is in place under its MD5
}

// UploadPartOf finds the state of content sum in the user's upload id.
func (e *Engine) UploadPartOf(ctx context.Context, u store.User, id, sum string) (UploadPart, error) {
	var p UploadPart
	if !validUploadID(id) {
		return p, errf(KindBadRequest, "%q is not a valid upload id", id)
	}
	if !pool.ValidMD5(sum) {
		return p, errf(KindBadRequest, "%q is not an MD5 checksum (32 lowercase hex digits)", sum)
	}
	owner, err := e.db.UploadOwner(ctx, id)
	if err != nil || owner != u.ID {
		return p, errf(KindNotFound, "upload %s does not exist", id)
	}
	p.Dir = filepath.Join(e.davDir(u.Name), id)
	if err := realDir(p.Dir, "upload "+id); err != nil {
		return p, err
	}
	if fi, err := os.Lstat(filepath.Join(p.Dir, sum)); err == nil && fi.Mode().IsRegular() {
		return UploadPart{Dir: p.Dir, Have: fi.Size(), Complete: true}, nil
	}
	if fi, err := os.Lstat(filepath.Join(p.Dir, partialPrefix+sum)); err == nil && fi.Mode().IsRegular() {
		p.Have = fi.Size()
	}
	return p, nil
}

// AppendUpload writes body at offset start of content sum (total bytes in
// all), in the user's upload id. start must be what the server holds. It
// returns the new state; once the content is whole it is checked against
// its MD5 and put in place (a mismatch removes it). A body cut short keeps
// what arrived. maxLeft bounds what this piece may add (the upload and
// scratch limits), 0 for none.
func (e *Engine) AppendUpload(ctx context.Context, u store.User, id, sum string, start, total int64, body io.Reader, maxLeft int64) (UploadPart, error) {
	p, err := e.UploadPartOf(ctx, u, id, sum)
	if err != nil {
		return p, err
	}
	if p.Complete {
		return p, nil
	}
	if start != p.Have {
		return p, errf(KindConflict, "the server holds %d bytes of %s, not %d: send from byte %d", p.Have, sum, start, p.Have)
	}
	if total < start {
		return p, errf(KindBadRequest, "total size %d is below the start %d", total, start)
	}
	if maxLeft > 0 && total-start > maxLeft {
		return p, errf(KindTooLarge, "the upload is larger than this server accepts (%d more bytes, at most %d)", total-start, maxLeft)
	}
	partial := filepath.Join(p.Dir, partialPrefix+sum)
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return p, err
	}
	if err := f.Truncate(start); err != nil {
		f.Close()
		return p, err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return p, err
	}
	n, cerr := io.Copy(f, io.LimitReader(body, total-start))
	if err := f.Close(); cerr == nil {
		cerr = err
	}
	p.Have = start + n
	if cerr != nil {
		if IsNoSpace(cerr) {
			return p, cerr
		}
		return p, fmt.Errorf("receiving %s (kept %d bytes to go on from): %w", sum, p.Have, cerr)
	}
	if p.Have < total {
		return p, nil
	}
	return e.finishUpload(p, sum, partial)
}

// finishUpload checks a whole partial against its MD5 and gives it its name.
func (e *Engine) finishUpload(p UploadPart, sum, partial string) (UploadPart, error) {
	f, err := os.Open(partial)
	if err != nil {
		return p, err
	}
	h := md5.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return p, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		os.Remove(partial)
		p.Have = 0
		return p, errf(KindBadRequest, "upload refused: the content has MD5 %s, not the %s its name announces (the partial content was dropped)", got, sum)
	}
	written, err := os.Lstat(partial)
	if err != nil {
		return p, err
	}
	dst := filepath.Join(p.Dir, sum)
	if err := os.Rename(partial, dst); err != nil {
		return p, err
	}
	e.Pool.NoteVerified(dst, sum, written)
	p.Complete = true
	return p, nil
}
