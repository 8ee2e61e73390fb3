package server

import (
	"errors"
	"net/http"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/workflow/wire"
)

// misconfigured answers a request to a queue the administrator set up
// wrong: 500 (a 503 would have clients retry what lasts until someone
// fixes it) with code queue_misconfigured, naming the queue, and the
// detail, which holds the server's paths, in the log under a request id.
func (s *Server) misconfigured(w http.ResponseWriter, r *http.Request, err error) {
	id := reqid.New()
	msg, detail := err.Error(), err
	if ee := (*engine.Error)(nil); errors.As(err, &ee) {
		msg, detail = ee.Msg, ee.Err
	}
	s.Log.Error("queue misconfigured", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", detail)
	w.Header().Set(reqid.Header, id)
	writeError(w, http.StatusInternalServerError, wire.CodeQueueMisconfigured, msg+"; the server's log has it under request "+id)
}
