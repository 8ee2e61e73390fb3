package server

import (
	"bytes"
	"encoding/xml"
	"errors"
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

// Bounds on what a LOCK may bring: a lock lives in memory until it is
// released or expires, its owner with it.
const (
	maxLockBody  = 64 << 10
	maxLockOwner = 4 << 10
)

// lockBody reads a LOCK request's body (checkDAVXML bounded it): empty (a
// refresh), or its lockinfo.
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

// checkLockInfo refuses a lockinfo this server does not grant: other than
// a write lock, exclusive or shared, with an owner of at most maxLockOwner
// bytes.
func checkLockInfo(li lockInfo) error {
	if li.Write == nil {
		return errors.New("only write locks exist")
	}
	if (li.Shared == nil) == (li.Exclusive == nil) {
		return errors.New("the lockscope must be one of exclusive and shared")
	}
	if n := len(li.Owner.InnerXML); n > maxLockOwner {
		return fmt.Errorf("the owner is %d bytes long; this server keeps at most %d", n, maxLockOwner)
	}
	return nil
}

// lock answers every LOCK request (the library's own would grant any
// timeout, an owner of any size and exclusive locks only, and reads only
// a one-token If header for a refresh). name is the resource, h the If
// header (nil when none was sent).
func (s *Server) lock(w http.ResponseWriter, r *http.Request, prefix, name string, h *ifHeader, fsys *scratchFS, locks *lockManager) {
	empty, li, err := lockBody(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: the body is not a DAV:lockinfo element: "+err.Error())
		return
	}
	duration, ok := lockTimeout(r.Header.Get("Timeout"))
	if !ok {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: bad Timeout header")
		return
	}
	if empty {
		s.refreshLock(w, prefix, name, h, duration, locks)
		return
	}
	if err := checkLockInfo(li); err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: "+err.Error())
		return
	}
	zeroDepth := false
	switch r.Header.Get("Depth") {
	case "", "infinity", "Infinity":
	case "0":
		zeroDepth = true
	default:
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: Depth must be 0 or infinity")
		return
	}
	_, statErr := fsys.Stat(r.Context(), name)
	create := os.IsNotExist(statErr)
	if create && !s.scratchRoom(w, fsys.root, scratchMinCharge, "a new resource") {
		return
	}
	d := webdav.LockDetails{Root: name, Duration: duration, OwnerXML: li.Owner.InnerXML, ZeroDepth: zeroDepth}
	token, err := locks.create(time.Now(), d, li.Shared != nil, true)
	if errors.Is(err, errTooManyLocks) {
		writeError(w, http.StatusForbidden, wire.CodeQuotaExceeded, fmt.Sprintf("LOCK: you hold %d WebDAV locks, the most this server grants (max_dav_locks): UNLOCK some first, or let them expire (after at most %v)", s.E.Cfg.MaxDAVLocks, maxLockDuration))
		return
	}
	if err != nil {
		what := "a lock"
		if li.Shared != nil {
			what = "a lock that excludes a shared one"
		}
		writeError(w, webdav.StatusLocked, wire.CodeForbidden, "LOCK: the resource is locked already, by "+what)
		return
	}
	if create {
		f, err := fsys.OpenFile(r.Context(), name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			locks.Unlock(time.Now(), token)
			if os.IsNotExist(err) {
				writeError(w, http.StatusConflict, wire.CodeBadRequest, "LOCK: the collection to hold the new resource does not exist")
				return
			}
			s.davWriteFailed(w, r, err)
			return
		}
		s.scratch.add(fsys.root, scratchMinCharge)
	}
	l, _ := locks.lookup(token)
	w.Header().Set("Lock-Token", "<"+token+">")
	status := http.StatusOK
	if create {
		status = http.StatusCreated
	}
	writeLockDiscovery(w, status, prefix, l)
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
	depth, timeout, scope := "infinity", "Infinite", "exclusive" // held locks are never infinite
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
