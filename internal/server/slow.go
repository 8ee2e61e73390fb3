package server

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// errTooSlow ends a transfer whose client stays below the minimum rate.
var errTooSlow = errors.New("the client sends or reads too slowly: transfer cut off")

// rateGuard measures one direction of a transfer: the bytes that moved
// and the time spent waiting for the client to move them (not the time
// the server spends between reads or writes, so a busy server cuts off no
// one). Over each window of waiting, at least min bytes per second must
// have moved; no single wait may last a whole window.
type rateGuard struct {
	min    int64
	window time.Duration
	waited time.Duration
	moved  int64
}

// before returns the deadline of the next wait, or errTooSlow.
func (g *rateGuard) before(now time.Time) (time.Time, error) {
	if g.waited >= g.window {
		if float64(g.moved) < float64(g.min)*g.waited.Seconds() {
			return time.Time{}, errTooSlow
		}
		g.waited, g.moved = 0, 0
	}
	return now.Add(g.window), nil
}

func (g *rateGuard) after(start time.Time, n int) {
	g.waited += time.Since(start)
	g.moved += int64(n)
}

// timedOut tells a deadline's error (the client sent nothing for a whole
// window) from others.
func timedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// rateReader is a request body under a rateGuard.
type rateReader struct {
	io.ReadCloser
	rc   *http.ResponseController
	g    rateGuard
	slow bool // cut off
}

func (r *rateReader) Read(p []byte) (int, error) {
	now := time.Now()
	dl, err := r.g.before(now)
	if err != nil {
		r.cutOff()
		return 0, err
	}
	r.rc.SetReadDeadline(dl)
	n, err := r.ReadCloser.Read(p)
	r.g.after(now, n)
	switch {
	case err == io.EOF:
		// The whole body is in: the server's own look for a closed
		// connection must not meet this deadline.
		r.rc.SetReadDeadline(time.Time{})
	case timedOut(err):
		r.cutOff()
		err = errTooSlow
	}
	return n, err
}

// cutOff makes every further read of the connection fail at once: the
// server would otherwise wait for the rest of the body (to keep the
// connection) as slowly as the client sends it.
func (r *rateReader) cutOff() {
	r.slow = true
	r.rc.SetReadDeadline(time.Unix(1, 0))
}

// rateWriter is an answer under a rateGuard.
type rateWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	g    rateGuard
	slow bool // cut off
}

// Unwrap lets http.ResponseController reach the connection (Flush, and
// the deadlines).
func (w *rateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *rateWriter) Write(p []byte) (int, error) {
	now := time.Now()
	dl, err := w.g.before(now)
	if err != nil {
		w.slow = true
		return 0, err
	}
	w.rc.SetWriteDeadline(dl)
	n, err := w.ResponseWriter.Write(p)
	w.g.after(now, n)
	if timedOut(err) {
		w.slow, err = true, errTooSlow
	}
	return n, err
}

// readFromChunk is how much of a file one guarded sendfile moves.
const readFromChunk = 4 << 20

// ReadFrom keeps downloads on sendfile (http.ServeContent copies files
// through it, as an io.LimitedReader of the file), a chunk per deadline:
// each chunk is again a LimitedReader of the file itself, which the kernel
// copy takes.
func (w *rateWriter) ReadFrom(src io.Reader) (int64, error) {
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(writerOnly{w}, src)
	}
	lr, limited := src.(*io.LimitedReader)
	var total int64
	for {
		if limited && lr.N <= 0 {
			return total, nil
		}
		now := time.Now()
		dl, err := w.g.before(now)
		if err != nil {
			w.slow = true
			return total, err
		}
		w.rc.SetWriteDeadline(dl)
		part := &io.LimitedReader{R: src, N: readFromChunk}
		if limited {
			part = &io.LimitedReader{R: lr.R, N: min(lr.N, readFromChunk)}
		}
		want := part.N
		n, err := rf.ReadFrom(part)
		total += n
		if limited {
			lr.N -= n
		}
		w.g.after(now, int(n))
		if timedOut(err) {
			w.slow = true
			return total, errTooSlow
		}
		if err != nil || n < want {
			return total, err
		}
	}
}

// writerOnly hides ReadFrom, so that io.Copy does not come back to it.
type writerOnly struct{ io.Writer }

// guardTransfers puts every request body and answer under the minimum
// transfer rate of t (nothing when it sets none).
func guardTransfers(h http.Handler, t engine.Transfer, log *slog.Logger) http.Handler {
	if t.MinTransferRate <= 0 || t.TransferWindowSeconds <= 0 {
		return h
	}
	window := time.Duration(t.TransferWindowSeconds) * time.Second
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		g := rateGuard{min: t.MinTransferRate, window: window}
		var body *rateReader
		if r.Body != nil && r.Body != http.NoBody {
			body = &rateReader{ReadCloser: r.Body, rc: rc, g: g}
			// On a copy: after the handler, the server looks at the
			// original's body (to answer an unanswered Expect:
			// 100-continue without waiting for the body, say).
			r = r.WithContext(r.Context())
			r.Body = body
		}
		out := &rateWriter{ResponseWriter: w, rc: rc, g: g}
		h.ServeHTTP(out, r)
		if body != nil && body.slow || out.slow {
			log.Warn("cut off a client that sent or read too slowly", "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path,
				"min_transfer_rate", t.MinTransferRate, "window_seconds", t.TransferWindowSeconds)
		}
	})
}

// Flush sends what is buffered (for handlers that stream).
func (w *rateWriter) Flush() { w.rc.Flush() }

// userRequests bounds each user's requests in progress at once, so that
// one user's stalled or runaway clients cannot take all connections.
type userRequests struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// take counts a request of user in; false when the user is at the limit.
func (u *userRequests) take(user string) bool {
	if u == nil || u.max <= 0 {
		return true
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[user] >= u.max {
		return false
	}
	if u.n == nil {
		u.n = map[string]int{}
	}
	u.n[user]++
	return true
}

func (u *userRequests) done(user string) {
	if u == nil || u.max <= 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[user]--; u.n[user] <= 0 {
		delete(u.n, user)
	}
}
