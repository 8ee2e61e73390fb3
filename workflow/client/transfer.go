package client

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/workflow/wire"
)

// writeBufSize is how much a download gathers before writing it out: the
// socket hands over a few kB at a time, and written as they come that is
// a write(2) per few kB. One write per writeBufSize is a single one for
// most result files.
const writeBufSize = 256 << 10

// writeBufs holds the download buffers, reused across downloads.
var writeBufs = sync.Pool{New: func() any {
	b := make([]byte, writeBufSize)
	return &b
}}

// HashFile streams a file and returns its MD5 (hex) and size, as the
// server computes it.
func HashFile(path string) (md5hex string, size int64, err error) { return md5sum.File(path) }

// progressReader reports every chunk read to onProgress.
type progressReader struct {
	r          io.Reader
	onProgress func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 && p.onProgress != nil {
		p.onProgress(int64(n))
	}
	return n, err
}

// PutFile streams localPath with PUT to davPath+md5 on the server's host.
// davPath is the absolute path from NewUpload; onProgress may be nil.
func (c *Client) PutFile(ctx context.Context, davPath, md5hex, localPath string, onProgress func(n int64)) error {
	if !strings.HasPrefix(davPath, "/") {
		return fmt.Errorf("the server gave an invalid upload path %q", davPath)
	}
	if !strings.HasSuffix(davPath, "/") {
		davPath += "/"
	}
	f, err := os.Open(localPath)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPut, c.hostURL(davPath+md5hex), &progressReader{r: f, onProgress: onProgress})
	if err != nil {
		return fmt.Errorf("building the upload of %s: %w", localPath, err)
	}
	req.ContentLength = st.Size()
	req.Header.Set("Content-Type", "application/octet-stream")
	c.davAuth(req, davPath)
	resp, err := c.send(ctx, req)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusInternalServerError && ae.Code == "" {
			// A web server's own WebDAV (Apache's mod_dav) says why only in
			// its error log; the usual cause is its lock database.
			return fmt.Errorf("uploading %s: %w (the WebDAV area failed: its web server's error log says why; under Apache, often a DAVLockDB its user cannot write, see examples/apache/rboinc.conf)", localPath, err)
		}
		return fmt.Errorf("uploading %s: %w", localPath, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// davAuth sets HTTP Basic on a request to the WebDAV area: under Apache
// the area is mod_dav, which knows only Basic (user name from the path,
// token as password); rboinc-server's own WebDAV accepts both.
func (c *Client) davAuth(req *http.Request, davPath string) {
	if owner, _, _ := strings.Cut(strings.TrimPrefix(davPath, wire.DAVPrefix), "/"); c.Token != "" && owner != "" && strings.HasPrefix(davPath, wire.DAVPrefix) {
		req.SetBasicAuth(owner, c.Token)
	}
}

// Download fetches rf into destPath. The bytes go to a temporary file in
// the same directory while being hashed; only a file whose MD5 matches
// rf.MD5 is synced and renamed to destPath, so destPath never holds a
// partial file.
func (c *Client) Download(ctx context.Context, rf wire.ResultFile, destPath string, onProgress func(n int64)) error {
	tmp, err := c.fetch(ctx, rf, destPath, onProgress, true)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, destPath); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", destPath, err)
	}
	return nil
}

// fetch streams rf into a temporary file beside destPath, hashing on the
// way, and returns its name once the content is verified (and, with
// durable, on stable storage). The caller renames it into place. A
// transfer cut by a passing failure is taken up where it stopped, in this
// run (retries) or the next: the partial file, named after the content's
// MD5, stays, and the rest is asked for with a Range request.
func (c *Client) fetch(ctx context.Context, rf wire.ResultFile, destPath string, onProgress func(n int64), durable bool) (string, error) {
	var name string
	err := c.Retrying(ctx, func() error {
		var err error
		name, err = c.fetchOnce(ctx, rf, destPath, onProgress, durable)
		return err
	})
	return name, err
}

// partialName is where a download of rf into destPath keeps its bytes
// until verified: one name per content, so that the next try finds it.
func partialName(destPath string, rf wire.ResultFile) string {
	dir, base := filepath.Split(destPath)
	if dir == "" {
		dir = "."
	}
	return filepath.Join(dir, "."+base+".part-"+strings.ToLower(rf.MD5))
}

func (c *Client) fetchOnce(ctx context.Context, rf wire.ResultFile, destPath string, onProgress func(n int64), durable bool) (_ string, err error) {
	if !strings.HasPrefix(rf.Path, "/") {
		return "", fmt.Errorf("the server gave an invalid path %q for %s", rf.Path, rf.Name)
	}
	path := partialName(destPath, rf)
	tmp, err := openPartial(path)
	if err != nil {
		return "", fmt.Errorf("cannot write into %s: %w", filepath.Dir(path), err)
	}
	keep := false // a passing failure keeps the bytes for the next try
	defer func() {
		if err != nil {
			tmp.Close()
			if !keep {
				os.Remove(path)
			}
		}
	}()
	// What an earlier try fetched: hashed again, then asked for the rest.
	h := md5.New()
	have, err := io.Copy(h, tmp)
	if err == nil && have > 0 && have == rf.Size && strings.EqualFold(hex.EncodeToString(h.Sum(nil)), rf.MD5) {
		// An earlier try got it all but was cut before the rename: no
		// request (a Range from its end would be refused 416).
		if onProgress != nil {
			onProgress(have)
		}
		return finishPartial(tmp, path, destPath, durable)
	}
	if err != nil || have >= rf.Size {
		// Unreadable, too long, or whole but damaged: start over.
		have, h = 0, md5.New()
		if err := tmp.Truncate(0); err != nil {
			return "", fmt.Errorf("writing %s: %w", destPath, err)
		}
	}
	req, err := http.NewRequest(http.MethodGet, c.Base.String()+rf.Path, nil)
	if err != nil {
		return "", fmt.Errorf("building the download of %s: %w", rf.Name, err)
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
		req.Header.Set("If-Range", `"`+rf.MD5+`"`)
	}
	resp, err := c.sendOnce(ctx, req)
	if err != nil {
		keep = Transient(err)
		return "", fmt.Errorf("downloading %s: %w", rf.Name, err)
	}
	defer resp.Body.Close()
	if have > 0 && resp.StatusCode != http.StatusPartialContent {
		// The whole content again: start over.
		have, h = 0, md5.New()
		if err := tmp.Truncate(0); err != nil {
			return "", fmt.Errorf("writing %s: %w", destPath, err)
		}
	}
	if _, err := tmp.Seek(have, io.SeekStart); err != nil {
		return "", fmt.Errorf("writing %s: %w", destPath, err)
	}
	if onProgress != nil && have > 0 {
		onProgress(have)
	}
	bufp := writeBufs.Get().(*[]byte)
	defer writeBufs.Put(bufp)
	buf := *bufp
	n := have
	held := 0 // bytes in buf not yet written
	// The socket is read straight into the write buffer (no copy between
	// them), hashed there, and the buffer written out whenever it is full.
	for {
		if held == len(buf) {
			if _, err = tmp.Write(buf); err != nil {
				return "", fmt.Errorf("writing %s: %w", destPath, err)
			}
			held = 0
		}
		k, rerr := resp.Body.Read(buf[held:])
		if k > 0 {
			h.Write(buf[held : held+k])
			held += k
			n += int64(k)
			if onProgress != nil {
				onProgress(int64(k))
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("interrupted: %w", ctx.Err())
			}
			// Keep what came: the next try asks for the rest.
			if _, werr := tmp.Write(buf[:held]); werr == nil {
				keep = true
			}
			return "", fmt.Errorf("downloading %s: %w", rf.Name, c.unreachable(ctx, rerr))
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, rf.MD5) {
		return "", fmt.Errorf("downloaded %s is damaged (%d bytes, MD5 %s; the server announced %d bytes, MD5 %s)",
			rf.Name, n, got, rf.Size, rf.MD5)
	}
	if _, err = tmp.Write(buf[:held]); err != nil {
		return "", fmt.Errorf("writing %s: %w", destPath, err)
	}
	return finishPartial(tmp, path, destPath, durable)
}

// finishPartial makes the verified partial file tmp (at path) ready to be
// renamed to destPath, and closes it.
func finishPartial(tmp *os.File, path, destPath string, durable bool) (string, error) {
	if err := tmp.Chmod(0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", destPath, err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return "", fmt.Errorf("writing %s: %w", destPath, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", destPath, err)
	}
	return path, nil
}
