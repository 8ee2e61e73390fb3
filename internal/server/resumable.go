package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// uploadPart answers HEAD PathUploads/<id>/<md5>: how much of a resumable
// upload the server holds.
func (s *Server) uploadPart(w http.ResponseWriter, r *http.Request, u store.User) {
	p, err := s.E.UploadPartOf(r.Context(), u, r.PathValue("id"), r.PathValue("md5"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writePart(w, p, http.StatusOK)
}

func writePart(w http.ResponseWriter, p engine.UploadPart, status int) {
	w.Header().Set("Upload-Offset", strconv.FormatInt(p.Have, 10))
	w.Header().Set("Upload-Complete", strconv.FormatBool(p.Complete))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"have": %d, "complete": %t}`+"\n", p.Have, p.Complete)
}

// appendUpload is PUT PathUploads/<id>/<md5>: one piece of a resumable
// upload, from the offset the server holds (Content-Range: bytes
// START-END/TOTAL; none: the whole content). The upload and scratch limits
// hold as for a WebDAV PUT.
func (s *Server) appendUpload(w http.ResponseWriter, r *http.Request, u store.User) {
	start, total, ok := parseContentRange(r.Header.Get("Content-Range"), r.ContentLength)
	if !ok {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "Content-Range must be `bytes START-END/TOTAL` with END = TOTAL-1, or absent with a Content-Length")
		return
	}
	lim := s.E.Cfg.Limits
	if lim.MaxUploadBytes > 0 && total > lim.MaxUploadBytes {
		writeError(w, http.StatusRequestEntityTooLarge, wire.CodeTooLarge, fmt.Sprintf("the upload is larger than this server accepts for one file (%d bytes, max_upload_bytes)", lim.MaxUploadBytes))
		return
	}
	root := s.E.DAVRoot(u)
	var left int64
	if lim.MaxScratchBytes > 0 {
		used := s.scratch.used(root)
		// A new content counts at least scratchMinCharge.
		if left = lim.MaxScratchBytes - used; left <= 0 || start == 0 && left < scratchMinCharge || total-start > left {
			writeError(w, http.StatusRequestEntityTooLarge, wire.CodeQuotaExceeded, fmt.Sprintf("your scratch area holds %d bytes and the limit is %d: this upload does not fit; submit or delete your pending uploads first", used, lim.MaxScratchBytes))
			return
		}
	}
	p, err := s.E.AppendUpload(r.Context(), u, r.PathValue("id"), r.PathValue("md5"), start, total, r.Body, left)
	if p.Have > start {
		// Counted at once, also when the chunk broke off (its bytes are
		// kept to go on from): the next chunk's room is reckoned with them.
		before := int64(0)
		if start > 0 {
			before = charge(start)
		}
		s.scratch.add(root, charge(p.Have)-before)
	}
	if engine.KindOf(err) == engine.KindConflict {
		w.Header().Set("Upload-Offset", strconv.FormatInt(p.Have, 10))
		writeError(w, http.StatusConflict, wire.CodeUploadOffset, err.Error())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.scratch.forget(root)
	if p.Complete {
		writePart(w, p, http.StatusCreated)
		return
	}
	writePart(w, p, http.StatusOK)
}

// parseContentRange reads `bytes START-END/TOTAL` (END the last byte: the
// piece runs to the end), or none (the whole content of length n).
func parseContentRange(h string, n int64) (start, total int64, ok bool) {
	if h == "" {
		return 0, n, n >= 0
	}
	rest, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rng, "-")
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	total, err3 := strconv.ParseInt(tot, 10, 64)
	if !found || err1 != nil || err2 != nil || err3 != nil || start < 0 || total <= 0 || end != total-1 || start > end {
		return 0, 0, false
	}
	if n >= 0 && n != end-start+1 {
		return 0, 0, false
	}
	return start, total, true
}
