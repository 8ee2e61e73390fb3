package server

import (
	"net/http"
	"strings"

	"github.com/rboinc/rboinc/workflow/wire"
)

// withAPIHint answers a request for a path outside the API (and outside
// WebDAV) that no route takes with a 404 that says where the API is, in
// words and in the header wire.HeaderAPIBase: a client given a wrong URL
// can then name the right one, instead of showing Go's "404 page not
// found". Paths inside the API keep the mux's answers (404, 405).
func withAPIHint(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		inside := p == Base || strings.HasPrefix(p, Base+"/") || strings.HasPrefix(p, wire.DAVPrefix)
		if !inside {
			if _, pattern := mux.Handler(r); pattern == "" {
				w.Header().Set(wire.HeaderAPIBase, Base)
				writeError(w, http.StatusNotFound, wire.CodeNotFound,
					"no such path "+p+" on this rboinc server: its API is at "+scheme(r)+"://"+r.Host+Base)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// scheme is the request's scheme as the client used it.
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
