package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// submitInline answers wire.PathSubmitInline: a submission whose missing
// contents follow its JSON in the same body, so that a thousand small
// files cost one request instead of a PUT each. The contents count against
// the scratch-area limit as uploads would, and go into the pool as they
// stream, each checked against its MD5 (see engine.SubmitInline).
func (s *Server) submitInline(w http.ResponseWriter, r *http.Request, u store.User) {
	br := bufio.NewReaderSize(r.Body, 64<<10)
	var req wire.SubmitRequest
	head := &heldBody{b: &s.bodies}
	defer head.release() // once answered: the request decoded from it lives that long
	dec, err := decodeHead(br, s.bodyLimit(submitBody), head, &req)
	if err != nil {
		s.bodyFailed(w, r, submitBody, "malformed submission", err)
		return
	}
	// What the decoder read past the JSON is where the contents start.
	rest := io.MultiReader(dec.Buffered(), br)
	var nl [1]byte
	if n, _ := io.ReadFull(rest, nl[:]); n == 1 && nl[0] != '\n' || n == 0 && len(req.Inline) > 0 {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "malformed submission: the JSON request must be followed by a newline, then the inline contents")
		return
	}
	root := s.E.DAVRoot(u)
	if lim := s.E.Cfg.MaxScratchBytes; lim > 0 {
		used, add := s.scratch.used(root), engine.InlineBytes(req)
		if used+add > lim {
			writeError(w, http.StatusRequestEntityTooLarge, wire.CodeQuotaExceeded, fmt.Sprintf("your scratch area holds %d bytes and this submission brings %d more; the limit is %d bytes: submit or delete your pending uploads first", used, add, lim))
			return
		}
	}
	// The submission may take (and remove) an upload collection too.
	defer s.scratch.forget(root)
	s.answer(w, r)(s.E.SubmitInline(r.Context(), u, req, rest))
}

// decodeHead decodes the JSON object at the start of br (at most limit
// bytes, each charged to the budget through head) as strictly as
// decodeBody does: an object, no unknown fields. What follows it is the
// decoder's Buffered data, then the rest of br. Past limit, the error is
// an *http.MaxBytesError.
func decodeHead(br *bufio.Reader, limit int64, head *heldBody, v any) (*json.Decoder, error) {
	lr := &io.LimitedReader{R: br, N: limit}
	for {
		if lr.N--; lr.N < 0 {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		c, err := br.ReadByte()
		if err != nil {
			return nil, errors.New("the body is empty; want a JSON object")
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		br.UnreadByte()
		lr.N++
		if c != '{' {
			return nil, errors.New("the body does not start with a JSON object")
		}
		break
	}
	head.r = lr
	dec := json.NewDecoder(head)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if lr.N <= 0 && !errors.Is(err, errBusy) {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		return nil, err
	}
	return dec, nil
}
