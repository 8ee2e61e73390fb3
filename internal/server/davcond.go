package server

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// davConditions checks a request against its If header and the area's
// locks before the WebDAV library sees it, answering 400 (a malformed
// header), 412 (no list of the header holds) or 423 (a resource it
// changes is locked and no token of the lock was submitted). name and dst
// are the resource and the COPY or MOVE destination ("" when none), both
// "/"-rooted in the area. It returns the parsed header (nil when none was
// sent) and whether the request may go on.
func (s *Server) davConditions(w http.ResponseWriter, r *http.Request, prefix, root, name, dst string, locks *lockManager) (*ifHeader, bool) {
	var h *ifHeader
	if v := r.Header.Values("If"); len(v) > 0 {
		parsed, err := parseIf(strings.Join(v, " "))
		if err != nil {
			writeError(w, http.StatusBadRequest, wire.CodeBadRequest, err.Error())
			return nil, false
		}
		h = &parsed
	}
	exists := func(n string) bool {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(n)))
		return err == nil
	}
	var guards []guard
	switch r.Method {
	case "PUT", "MKCOL":
		guards = []guard{{name: name, member: !exists(name)}}
	case "PROPPATCH":
		guards = []guard{{name: name}}
	case "DELETE":
		guards = []guard{{name: name, tree: true, member: true}}
	case "MOVE":
		guards = []guard{{name: name, tree: true, member: true}, {name: dst, tree: true, member: true}}
	case "COPY":
		guards = []guard{{name: dst, tree: true, member: true}}
	case "LOCK":
		// A new lock is checked against the others when it is made; one
		// on a name not yet mapped adds a member to its collection.
		if !exists(name) {
			guards = []guard{{name: name, member: true}}
		}
	}
	resolve := func(tag string) (string, bool) {
		u, err := url.Parse(tag)
		if err != nil || u.Host != "" && !strings.EqualFold(u.Host, r.Host) {
			return "", false
		}
		rest, ok := strings.CutPrefix(u.Path, prefix)
		if !ok || rest != "" && !strings.HasPrefix(rest, "/") {
			return "", false
		}
		return cleanName(rest + "/"), true
	}
	switch locks.check(time.Now(), h, name, resolve, guards...) {
	case http.StatusPreconditionFailed:
		writeError(w, http.StatusPreconditionFailed, wire.CodeBadRequest, "If header: none of its conditions holds (a lock token that is not current, or an entity tag that does not match)")
		return nil, false
	case http.StatusLocked:
		writeError(w, http.StatusLocked, wire.CodeForbidden, r.Method+": a resource it changes is locked, and the request's If header does not hold the lock's token")
		return nil, false
	}
	return h, true
}
