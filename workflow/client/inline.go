package client

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/rboinc/rboinc/internal/fsync"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Contents this small go in the submission's own request (at most
// inlineTotal of them in all); larger ones are PUT a few at a time.
const (
	inlineMaxFile = 1 << 20
	inlineTotal   = 64 << 20
)

// errInlineUnsupported means the server predates wire.PathSubmitInline.
var errInlineUnsupported = errors.New("the server does not take contents with the submission")

// SubmitInline creates the chains of req and sends the contents files
// (req.Inline is set from them) in the same request body, streamed from
// disk. A file that changed since it was hashed stops the request.
func (c *Client) SubmitInline(ctx context.Context, req wire.SubmitRequest, files []content, onProgress func(int64)) (*wire.SubmitResponse, error) {
	req.Inline = make([]wire.FileRef, len(files))
	total := int64(0)
	for i, f := range files {
		req.Inline[i] = f.ref
		total += f.ref.Size
	}
	head, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the submission: %w", err)
	}
	head = append(head, '\n')
	body := &inlineBody{head: bytes.NewReader(head), files: files, onProgress: onProgress}
	defer body.Close()
	hr, err := http.NewRequest(http.MethodPost, c.apiURL(wire.PathSubmitInline, nil), body)
	if err != nil {
		return nil, fmt.Errorf("building the submission: %w", err)
	}
	hr.ContentLength = int64(len(head)) + total
	hr.Header.Set("Content-Type", "application/octet-stream")
	hr.Header.Set("Accept", "application/json")
	resp, err := c.send(ctx, hr)
	if ferr := body.failure(); ferr != nil {
		if err == nil {
			resp.Body.Close()
		}
		return nil, ferr // our own reason to stop sending
	}
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Code == "" && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
			return nil, errInlineUnsupported
		}
		return nil, err
	}
	defer resp.Body.Close()
	var r wire.SubmitResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		if ctx.Err() != nil {
			return nil, c.unreachable(ctx, err)
		}
		return nil, fmt.Errorf("the server's answer to the submission is not valid: %w", err)
	}
	return &r, nil
}

// inlineBody is the body of an inline submission: the JSON request, then
// each file's bytes: those kept when it was hashed, or read from disk as
// the transport asks for them and checked against the MD5 they were
// announced with.
type inlineBody struct {
	head       *bytes.Reader
	files      []content
	onProgress func(int64)

	mu   sync.Mutex // the transport reads and closes from its own goroutines
	i    int        // current file
	off  int        // bytes of its kept data sent
	f    *os.File   // open current file, nil between files
	left int64      // its bytes still to send
	h    hash.Hash
	err  error // why the body stopped, when it was the files' fault
}

func (b *inlineBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if b.head.Len() > 0 {
		return b.head.Read(p)
	}
	for b.f == nil {
		if b.i >= len(b.files) {
			return 0, io.EOF
		}
		ct := b.files[b.i]
		if ct.data != nil {
			// The very bytes hashed, kept: sent as they are.
			if b.off < len(ct.data) {
				n := copy(p, ct.data[b.off:])
				b.off += n
				if b.onProgress != nil {
					b.onProgress(int64(n))
				}
				return n, nil
			}
			b.i, b.off = b.i+1, 0
			continue
		}
		f, err := fsync.OpenRead(ct.path) // a plain descriptor: thousands of small files
		if err != nil {
			return 0, b.fail(fmt.Errorf("reading %s: %w", ct.path, err))
		}
		b.f, b.left = f, ct.ref.Size
		if b.h == nil {
			b.h = md5.New()
		}
		b.h.Reset()
		if b.left == 0 {
			if err := b.endFile(); err != nil {
				return 0, err
			}
		}
	}
	ct := b.files[b.i]
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.f.Read(p)
	b.h.Write(p[:n])
	b.left -= int64(n)
	if n > 0 && b.onProgress != nil {
		b.onProgress(int64(n))
	}
	switch {
	case b.left == 0:
		if err := b.endFile(); err != nil {
			return n, err
		}
	case err == io.EOF:
		return n, b.fail(fmt.Errorf("%s became shorter while it was being submitted; nothing was submitted, submit again", ct.path))
	case err != nil:
		return n, b.fail(fmt.Errorf("reading %s: %w", ct.path, err))
	}
	return n, nil
}

// endFile checks the file just sent and moves to the next.
func (b *inlineBody) endFile() error {
	ct := b.files[b.i]
	b.f.Close()
	b.f = nil
	b.i++
	if got := hex.EncodeToString(b.h.Sum(nil)); got != ct.ref.MD5 {
		return b.fail(fmt.Errorf("%s changed while it was being submitted; nothing was submitted, submit again", ct.path))
	}
	return nil
}

func (b *inlineBody) fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// failure is why the body stopped, when the files were the reason.
func (b *inlineBody) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *inlineBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	return nil
}
