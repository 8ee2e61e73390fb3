package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/rboinc/rboinc/workflow/wire"
)

// resumableMin is the size from which an upload goes by the server's
// resumable upload (an interrupted transfer goes on where it stopped)
// rather than by one WebDAV PUT.
const resumableMin = 16 << 20

// errNoResumable means the server has no resumable uploads (an older one).
var errNoResumable = errors.New("the server has no resumable uploads")

// putResumable sends the file at path (content sum, size bytes) into upload
// collection up in pieces: it asks how much the server holds and sends the
// rest; after a passing failure it asks again and goes on from there.
func (c *Client) putResumable(ctx context.Context, up wire.UploadResponse, sum, path string, size int64, onProgress func(int64)) error {
	counted := int64(0) // bytes reported to onProgress, so that a resumed part is not counted twice
	return c.Retrying(ctx, func() error {
		part, err := c.uploadPart(ctx, http.MethodHead, up.ID, sum, nil, 0, size)
		if err != nil {
			return err
		}
		if onProgress != nil && part.Have > counted {
			onProgress(part.Have - counted)
			counted = part.Have
		}
		if part.Complete {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		body := &progressReader{r: io.NewSectionReader(f, part.Have, size-part.Have), onProgress: func(n int64) {
			counted += n
			if onProgress != nil {
				onProgress(n)
			}
		}}
		part, err = c.uploadPart(ctx, http.MethodPut, up.ID, sum, body, part.Have, size)
		if err != nil {
			return fmt.Errorf("uploading %s: %w", path, err)
		}
		if !part.Complete {
			return &unreachableError{base: c.Base.String(), err: fmt.Errorf("the upload of %s stopped at byte %d of %d", path, part.Have, size)}
		}
		return nil
	})
}

// uploadPart is one HEAD or PUT of a resumable upload.
func (c *Client) uploadPart(ctx context.Context, method, id, sum string, body io.Reader, start, size int64) (wire.UploadPart, error) {
	var p wire.UploadPart
	req, err := http.NewRequest(method, c.apiURL(wire.PathUploads+"/"+id+"/"+sum, nil), body)
	if err != nil {
		return p, err
	}
	if method == http.MethodPut {
		req.ContentLength = size - start
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("Content-Range", "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(size-1, 10)+"/"+strconv.FormatInt(size, 10))
		if size == start {
			req.Body = http.NoBody
		}
	}
	resp, err := c.sendOnce(ctx, req)
	var api *APIError
	if errors.As(err, &api) && api.Code == "" && (api.Status == http.StatusNotFound || api.Status == http.StatusMethodNotAllowed) {
		return p, errNoResumable
	}
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	if method == http.MethodHead {
		p.Have, _ = strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
		p.Complete = resp.Header.Get("Upload-Complete") == "true"
		return p, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return p, c.unreachable(ctx, err)
	}
	return p, nil
}
