package server

import (
	"net/http"
	"strconv"

	"github.com/rboinc/rboinc/workflow/wire"
)

// stateRetry is the Retry-After of an answer given while the state
// database is out of reach: a MariaDB restart takes seconds.
const stateRetry = 5

// stateUnavailable answers a request that failed because the state
// database cannot be reached at the moment (store.Unreachable): 503 with
// Retry-After, which clients retry, since the request may be sent again
// as it is; not a 500 (an error the client gives up on) nor, for the
// token's look-up, a 401.
func (s *Server) stateUnavailable(w http.ResponseWriter, r *http.Request, err error) {
	s.Log.Warn("the state database cannot be reached; answered 503", "method", r.Method, "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", strconv.Itoa(stateRetry))
	writeError(w, http.StatusServiceUnavailable, wire.CodeServerBusy, "the server cannot reach its database at the moment (a restart?); nothing is lost: send the request again in a few seconds (a submission sent again is answered with the chains it made, none twice)")
}

// outcomeUnknown answers a request whose commit the state database did not
// confirm (store.ErrCommitUnknown): 503 with Retry-After, as for a database
// out of reach, but with its own code, which tells the clients that the
// change may have been made: they send again only what is safe to repeat.
func (s *Server) outcomeUnknown(w http.ResponseWriter, r *http.Request, err error) {
	s.Log.Warn("the state database went away during a commit; answered 503 outcome_unknown", "method", r.Method, "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", strconv.Itoa(stateRetry))
	writeError(w, http.StatusServiceUnavailable, wire.CodeOutcomeUnknown, "the server lost its database while recording this request: it may have been recorded or not; look at -status before doing it again (a submission, stop, abort, purge or priority may simply be sent again)")
}
