package server

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/webdav"

	"github.com/rboinc/rboinc/workflow/wire"
)

// lockInfo is a LOCK request's body.
type lockInfo struct {
	XMLName   xml.Name  `xml:"DAV: lockinfo"`
	Exclusive *struct{} `xml:"DAV: lockscope>exclusive"`
	Shared    *struct{} `xml:"DAV: lockscope>shared"`
	Write     *struct{} `xml:"DAV: locktype>write"`
	Owner     struct {
		InnerXML string `xml:",innerxml"`
	} `xml:"DAV: owner"`
}

// lockBody reads a LOCK request's body, leaving it readable for the
// library: empty (a refresh), or its lockinfo.
func lockBody(r *http.Request) (empty bool, li lockInfo, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return true, li, nil
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	if len(bytes.TrimSpace(b)) == 0 {
		return true, li, nil
	}
	return false, li, xml.Unmarshal(b, &li)
}

// lock answers the LOCK requests the library cannot: a shared lock, and a
// refresh of any lock (the library reads only a one-token If header and
// calls every lock it refreshes exclusive). It returns false for a new
// exclusive lock, left to the library. name is the resource, h the If
// header (nil when none was sent).
func (s *Server) lock(w http.ResponseWriter, r *http.Request, prefix, name string, h *ifHeader, fsys *scratchFS, locks *lockManager) bool {
	empty, li, err := lockBody(r)
	if err != nil {
		return false // malformed: the library answers it
	}
	duration, ok := lockTimeout(r.Header.Get("Timeout"))
	if !ok {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: bad Timeout header")
		return true
	}
	if empty {
		s.refreshLock(w, prefix, name, h, duration, locks)
		return true
	}
	if li.Shared == nil || li.Exclusive != nil {
		return false
	}
	if li.Write == nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: only write locks exist")
		return true
	}
	zeroDepth := false
	switch r.Header.Get("Depth") {
	case "", "infinity", "Infinity":
	case "0":
		zeroDepth = true
	default:
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: Depth must be 0 or infinity")
		return true
	}
	d := webdav.LockDetails{Root: name, Duration: duration, OwnerXML: li.Owner.InnerXML, ZeroDepth: zeroDepth}
	token, err := locks.create(time.Now(), d, true)
	if err != nil {
		writeError(w, webdav.StatusLocked, wire.CodeForbidden, "LOCK: the resource is locked already, by a lock that excludes a shared one")
		return true
	}
	created := false
	if _, err := fsys.Stat(r.Context(), name); os.IsNotExist(err) {
		f, err := fsys.OpenFile(r.Context(), name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			locks.Unlock(time.Now(), token)
			if os.IsNotExist(err) {
				writeError(w, http.StatusConflict, wire.CodeBadRequest, "LOCK: the collection to hold the new resource does not exist")
				return true
			}
			s.davWriteFailed(w, r, err)
			return true
		}
		created = true
	}
	l, _ := locks.lookup(token)
	w.Header().Set("Lock-Token", "<"+token+">")
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeLockDiscovery(w, status, prefix, l)
	return true
}

// refreshLock renews the locks on name whose tokens the If header holds
// (412 when it holds none).
func (s *Server) refreshLock(w http.ResponseWriter, prefix, name string, h *ifHeader, duration time.Duration, locks *lockManager) {
	if h == nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK without a body refreshes a lock: it needs an If header with the lock's token")
		return
	}
	var found *davLock
	for _, l := range h.lists {
		for _, c := range l.conds {
			if c.not || c.token == "" {
				continue
			}
			if l, ok := locks.refresh(time.Now(), c.token, name, duration); ok && found == nil {
				found = &l
			}
		}
	}
	if found == nil {
		writeError(w, http.StatusPreconditionFailed, wire.CodeBadRequest, "LOCK refresh: the If header names no lock on "+prefix+name)
		return
	}
	writeLockDiscovery(w, http.StatusOK, prefix, *found)
}

// writeLockDiscovery answers a LOCK with the lock's description.
func writeLockDiscovery(w http.ResponseWriter, status int, prefix string, l davLock) {
	depth, timeout, scope := "infinity", "Infinite", "exclusive"
	if l.details.ZeroDepth {
		depth = "0"
	}
	if l.details.Duration >= 0 {
		timeout = "Second-" + strconv.FormatInt(int64(l.details.Duration/time.Second), 10)
	}
	if l.shared {
		scope = "shared"
	}
	var root, tok strings.Builder
	xml.EscapeText(&root, []byte(prefix+l.details.Root))
	xml.EscapeText(&tok, []byte(l.token))
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?>`+"\n"+`<D:prop xmlns:D="DAV:"><D:lockdiscovery><D:activelock>`+
		`<D:locktype><D:write/></D:locktype><D:lockscope><D:%s/></D:lockscope><D:depth>%s</D:depth>`+
		`<D:owner>%s</D:owner><D:timeout>%s</D:timeout><D:locktoken><D:href>%s</D:href></D:locktoken>`+
		`<D:lockroot><D:href>%s</D:href></D:lockroot></D:activelock></D:lockdiscovery></D:prop>`,
		scope, depth, l.details.OwnerXML, timeout, tok.String(), root.String())
}

// lockTimeout reads a Timeout header: the first of its values this server
// takes ("Second-N" or "Infinite"); -1 means infinite.
func lockTimeout(h string) (time.Duration, bool) {
	if h == "" {
		return -1, true
	}
	for _, v := range strings.Split(h, ",") {
		v = strings.TrimSpace(v)
		if v == "Infinite" {
			return -1, true
		}
		if n, ok := strings.CutPrefix(v, "Second-"); ok {
			secs, err := strconv.ParseUint(n, 10, 32)
			if err == nil {
				return time.Duration(secs) * time.Second, true
			}
		}
	}
	return 0, false
}
