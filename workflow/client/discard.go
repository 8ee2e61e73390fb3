package client

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// DiscardUpload removes upload collection up, which the caller opened and
// no longer needs (its uploads failed), so that nothing is left behind. It
// asks the API, which needs no WebDAV (what may have failed); a server
// without that call gets a WebDAV DELETE. Best effort and quick: the
// server removes forgotten collections after a day anyway.
func (c *Client) DiscardUpload(ctx context.Context, up wire.UploadResponse) {
	if up.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := c.call(ctx, http.MethodDelete, wire.PathUploads+"/"+up.ID, nil, nil, nil)
	if err == nil {
		return
	}
	slog.Debug("removing a failed upload collection", "id", up.ID, "err", err)
	davPath := up.DAVPath
	if !strings.HasPrefix(davPath, "/") {
		return
	}
	if !strings.HasSuffix(davPath, "/") {
		davPath += "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.hostURL(davPath), nil)
	if err != nil {
		return
	}
	c.davAuth(req, davPath)
	if resp, err := c.send(ctx, req); err == nil {
		resp.Body.Close()
	}
}
