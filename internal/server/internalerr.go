package server

import (
	"net/http"

	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/workflow/wire"
)

// internalError answers a failure inside the server: 500 with a generic
// message and a request id, the real error logged under the same id. The
// error's own text (paths, SQL, database addresses) never reaches users.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	id := reqid.New()
	s.Log.Error("request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	w.Header().Set(reqid.Header, id)
	writeError(w, http.StatusInternalServerError, wire.CodeInternal, reqid.Message(id))
}
