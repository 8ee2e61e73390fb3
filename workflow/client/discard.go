package client

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// discardUpload removes an upload collection whose uploads failed, with a
// WebDAV DELETE (both the built-in area and Apache's mod_dav take it), so
// that a failed upload leaves no collection behind. It is best effort and
// quick: the server removes forgotten collections after a day anyway.
func (c *Client) discardUpload(ctx context.Context, davPath string) {
	if !strings.HasPrefix(davPath, "/") {
		return
	}
	if !strings.HasSuffix(davPath, "/") {
		davPath += "/"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.hostURL(davPath), nil)
	if err != nil {
		return
	}
	c.davAuth(req, davPath)
	resp, err := c.send(ctx, req)
	if err != nil {
		slog.Debug("removing a failed upload collection", "path", davPath, "err", err)
		return
	}
	resp.Body.Close()
}
