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

// sharedLockRequested tells whether a LOCK asks for a shared lock (the
// WebDAV library answers those 501); its body stays readable.
func sharedLockRequested(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var li lockInfo
	return xml.Unmarshal(b, &li) == nil && li.Shared != nil && li.Exclusive == nil
}

// sharedLock answers a LOCK for a shared write lock, as the library answers
// an exclusive one: a new lock on the resource (made empty when it does not
// exist yet), with Depth 0 or infinity and the Timeout asked for.
func (s *Server) sharedLock(w http.ResponseWriter, r *http.Request, prefix string, fsys *scratchFS, locks *lockManager) {
	var li lockInfo
	b, _ := io.ReadAll(r.Body)
	if err := xml.Unmarshal(b, &li); err != nil || li.Write == nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: a shared write lock's lockinfo is malformed")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, prefix)
	if name == "" {
		name = "/"
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
	duration, ok := lockTimeout(r.Header.Get("Timeout"))
	if !ok {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "LOCK: bad Timeout header")
		return
	}
	d := webdav.LockDetails{Root: name, Duration: duration, OwnerXML: li.Owner.InnerXML, ZeroDepth: zeroDepth}
	token, err := locks.create(time.Now(), d, true)
	if err != nil {
		http.Error(w, "Locked", webdav.StatusLocked)
		return
	}
	created := false
	if _, err := fsys.Stat(r.Context(), name); os.IsNotExist(err) {
		f, err := fsys.OpenFile(r.Context(), name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			locks.Unlock(time.Now(), token)
			s.fail(w, r, err)
			return
		}
		created = true
	}
	w.Header().Set("Lock-Token", "<"+token+">")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	if created {
		w.WriteHeader(http.StatusCreated)
	}
	depth, timeout := "infinity", "Infinite"
	if zeroDepth {
		depth = "0"
	}
	if duration >= 0 {
		timeout = "Second-" + strconv.FormatInt(int64(duration/time.Second), 10)
	}
	var root strings.Builder
	xml.EscapeText(&root, []byte(prefix+name))
	var tok strings.Builder
	xml.EscapeText(&tok, []byte(token))
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?>`+"\n"+`<D:prop xmlns:D="DAV:"><D:lockdiscovery><D:activelock>`+
		`<D:locktype><D:write/></D:locktype><D:lockscope><D:shared/></D:lockscope><D:depth>%s</D:depth>`+
		`<D:owner>%s</D:owner><D:timeout>%s</D:timeout><D:locktoken><D:href>%s</D:href></D:locktoken>`+
		`<D:lockroot><D:href>%s</D:href></D:lockroot></D:activelock></D:lockdiscovery></D:prop>`,
		depth, li.Owner.InnerXML, timeout, tok.String(), root.String())
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
