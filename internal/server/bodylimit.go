package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/rboinc/rboinc/workflow/wire"
)

// Request bodies of the JSON API are bounded three ways: each route reads
// at most what it needs (the limits below; a larger body is answered 413
// before it is read, or as soon as the limit is passed), lists are counted
// as they are read (decodeMissing, decodeAck), and the bytes of bodies
// read and not yet answered, across all requests, stay within the server's
// budget (max_json_bytes_in_flight): beyond it a request is answered 503
// with Retry-After instead of growing the heap.
const (
	// controlBody: stop, resume, extend, priority, abort, purge, batch
	// retire and lease, a ChainRef or BatchRef of a few names.
	controlBody = 1 << 20
	// listBody: pool/missing (wire.MaxMissingMD5s checksums) and ack
	// (wire.MaxAckFiles result file names).
	listBody = 4 << 20
	// batchListBody: batch query and abort, lists of batch or job names.
	batchListBody = 8 << 20
	// submitBody: a submission's JSON, up to engine.MaxChainsPerRequest
	// chains (100,000 chains of four files each take 31 MB), within the
	// budget's default. The contents of an inline submission that follow
	// it stream into the pool and are bounded apart (max_upload_bytes,
	// max_scratch_bytes).
	submitBody = 64 << 20
)

// busyRetry is the Retry-After of a request refused for the budget.
const busyRetry = 2

// bodyBudget bounds the bytes of JSON request bodies held at once across
// all requests: each byte read is charged until the request is answered
// (what was decoded from it lives that long). max 0: no bound.
type bodyBudget struct {
	max  int64
	used atomic.Int64
}

// take charges n bytes, or reports false when they do not fit.
func (b *bodyBudget) take(n int64) bool {
	if b.max <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *bodyBudget) give(n int64) {
	if b.max > 0 {
		b.used.Add(-n)
	}
}

// room tells whether n more bytes would fit now (no charge).
func (b *bodyBudget) room(n int64) bool { return b.max <= 0 || b.used.Load()+n <= b.max }

// errBusy: the budget had no room for the bytes just read.
var errBusy = errors.New("the server holds as many request bodies as it takes at once")

// heldBody reads a request body, charging every byte read to the budget
// until release.
type heldBody struct {
	r    io.Reader
	b    *bodyBudget
	held int64
}

func (h *heldBody) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		if !h.b.take(int64(n)) {
			return 0, errBusy
		}
		h.held += int64(n)
	}
	return n, err
}

// release gives back what the body was charged (once it is answered).
func (h *heldBody) release() {
	h.b.give(h.held)
	h.held = 0
}

// openBody is r's body, at most limit bytes, charged to the server's
// budget; a body announced larger than limit, or than the budget has room
// for, is refused before it is read (the answer is written, and ok false).
// The caller releases the body once it has answered.
func (s *Server) openBody(w http.ResponseWriter, r *http.Request, limit int64) (_ *heldBody, ok bool) {
	limit = s.bodyLimit(limit)
	if r.ContentLength > limit {
		tooLarge(w, r, limit)
		return nil, false
	}
	if r.ContentLength > 0 && !s.bodies.room(r.ContentLength) {
		s.busy(w)
		return nil, false
	}
	return &heldBody{r: http.MaxBytesReader(w, r.Body, limit), b: &s.bodies}, true
}

// bodyLimit is a route's limit, within the whole budget: a body the
// budget could never hold is refused as too large, not asked again.
func (s *Server) bodyLimit(limit int64) int64 {
	if s.limitDiv > 1 {
		limit /= s.limitDiv
	}
	if s.bodies.max > 0 {
		return min(limit, s.bodies.max)
	}
	return limit
}

// bodyFailed answers a body that could not be read or decoded: 413 past
// the route's limit or a list's count, 503 past the budget, 400 otherwise.
func (s *Server) bodyFailed(w http.ResponseWriter, r *http.Request, limit int64, what string, err error) {
	var mbe *http.MaxBytesError
	var many *tooManyError
	switch {
	case errors.Is(err, errBusy):
		s.busy(w)
	case errors.As(err, &mbe):
		tooLarge(w, r, s.bodyLimit(limit))
	case errors.As(err, &many):
		writeError(w, http.StatusRequestEntityTooLarge, wire.CodeTooLarge, fmt.Sprintf("%s %s takes at most %d items in %q; send the rest in another request", r.Method, r.URL.Path, many.max, many.field))
	default:
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, what+": "+err.Error())
	}
}

func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	w.Header().Set("Connection", "close") // see busy
	writeError(w, http.StatusRequestEntityTooLarge, wire.CodeTooLarge, fmt.Sprintf("the request body is larger than the %d bytes (%s) that %s %s takes; nothing of it was kept", limit, mib(limit), r.Method, r.URL.Path))
}

func (s *Server) busy(w http.ResponseWriter) {
	// The rest of a refused body is not read: net/http would otherwise
	// wait for it before answering, for as long as the sender stalls.
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", strconv.Itoa(busyRetry))
	writeError(w, http.StatusServiceUnavailable, wire.CodeServerBusy, fmt.Sprintf("the server is reading as many request bodies as it takes at once (%d bytes from all users, max_json_bytes_in_flight); nothing of this request was kept: send it again in a few seconds", s.bodies.max))
}

func mib(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}
