package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rboinc/rboinc/workflow/wire"
)

// maxDAVDepth bounds how deep collections nest in a scratch area: far
// below what a path's length allows (hundreds of levels), far above what
// any client makes (an upload collection and its files: two).
const maxDAVDepth = 32

// davDepth is the number of segments of a path in the scratch area (the
// area itself: 0).
func davDepth(sub string) int {
	sub = strings.Trim(sub, "/")
	if sub == "" {
		return 0
	}
	return strings.Count(sub, "/") + 1
}

// propfindFiniteDepth is RFC 4918's refusal of a PROPFIND of infinite
// depth (9.1): a walk of a whole tree is not offered.
const propfindFiniteDepth = `<?xml version="1.0" encoding="utf-8"?>` + "\n" +
	`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>` + "\n"

// checkPropfindDepth answers a PROPFIND whose Depth is infinity (also
// when the header is missing, which means infinity) with 403, and one
// with a Depth of no meaning with 400. It returns false when it answered.
func checkPropfindDepth(w http.ResponseWriter, r *http.Request) bool {
	switch d := r.Header.Get("Depth"); d {
	case "0", "1":
		return true
	case "", "infinity", "Infinity":
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, propfindFiniteDepth)
		return false
	default:
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, fmt.Sprintf("PROPFIND: Depth %q is none of 0, 1 (and infinity, which this server does not offer)", d))
		return false
	}
}

// A PROPFIND of Depth 1 lists at most maxDAVListing members: the answer is
// made a member at a time, but the library holds the whole listing
// meanwhile (100,000 members took 47 MiB and 20 s of CPU; 10,000 about
// 5 MiB). A user's listings of more than bigListing members run one at a
// time, so that many at once take no more.
const (
	maxDAVListing = 10000
	bigListing    = 1000
)

// davListing admits a PROPFIND of Depth 1: refused (403) for a collection
// of more than maxDAVListing members, made to wait its turn for one of
// more than bigListing. The caller calls done when the answer is out. It
// returns false when it answered (or the client left while waiting).
func (s *Server) davListing(w http.ResponseWriter, r *http.Request, user, root, sub string) (done func(), ok bool) {
	done = func() {}
	if r.Header.Get("Depth") != "1" {
		return done, true
	}
	n := countMembers(filepath.Join(root, filepath.FromSlash(strings.Trim(sub, "/"))), maxDAVListing+1)
	switch {
	case n > maxDAVListing:
		writeError(w, http.StatusForbidden, wire.CodeForbidden, fmt.Sprintf("PROPFIND: %s has more than %d members, more than this server lists at once (Depth 1); ask for them one by one (Depth 0)", "/"+sub, maxDAVListing))
		return done, false
	case n <= bigListing:
		return done, true
	}
	s.mu.Lock()
	if s.listings == nil {
		s.listings = map[string]chan struct{}{}
	}
	turn, found := s.listings[user]
	if !found {
		turn = make(chan struct{}, 1)
		s.listings[user] = turn
	}
	s.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, true
	case <-r.Context().Done():
		return done, false
	}
}

// davCreates is the path a request may create in the scratch area ("" for
// none): the request's own for MKCOL, PUT and LOCK, the Destination for
// COPY and MOVE.
func davCreates(method, sub, dst string) string {
	switch method {
	case "MKCOL", "PUT", "LOCK":
		return sub
	case "COPY", "MOVE":
		return dst
	}
	return ""
}

// davCreateLimits refuses a request that would nest collections deeper
// than maxDAVDepth, make a collection past the user's scratch quota, or
// add an entry at the top of the area when it holds max_open_uploads
// already. A request adding a top entry is serialized with the user's
// others doing so (the count and the creation together); it calls the
// returned function when done. It returns false when it answered.
func (s *Server) davCreateLimits(w http.ResponseWriter, r *http.Request, user, root, sub, dst string) (done func(), ok bool) {
	done = func() {}
	target := davCreates(r.Method, sub, dst)
	if target == "" {
		return done, true
	}
	if n := davDepth(target); n > maxDAVDepth {
		writeError(w, http.StatusForbidden, wire.CodeForbidden, fmt.Sprintf("%s is %d levels deep; collections nest at most %d deep on this server", target, n, maxDAVDepth))
		return done, false
	}
	if r.Method == "COPY" || r.Method == "MOVE" {
		if from, to := cleanName(sub), cleanName(dst); isBelow(to, from) {
			// The library would copy the tree into itself level after
			// level, until the path is too long for the file system.
			writeError(w, http.StatusForbidden, wire.CodeForbidden, fmt.Sprintf("%s: the Destination %s is inside %s, the collection %s", r.Method, dst, sub, map[string]string{"COPY": "copied", "MOVE": "moved"}[r.Method]))
			return done, false
		}
		below := subtreeDepth(filepath.Join(root, filepath.FromSlash(strings.Trim(sub, "/"))), maxDAVDepth-davDepth(dst)+1)
		if n := davDepth(dst) + below; n > maxDAVDepth {
			writeError(w, http.StatusForbidden, wire.CodeForbidden, fmt.Sprintf("%s %s would make a tree at least %d levels deep; collections nest at most %d deep on this server", r.Method, dst, n, maxDAVDepth))
			return done, false
		}
	}
	if r.Method == "MKCOL" && !s.scratchRoom(w, root, scratchMinCharge, "a new collection") {
		return done, false
	}
	max := s.E.Cfg.MaxOpenUploads
	topName := strings.Trim(target, "/")
	if max <= 0 || davDepth(topName) != 1 || r.Method == "MOVE" && davDepth(sub) == 1 {
		return done, true // not a new top entry (a rename at the top keeps the count)
	}
	mu := s.topLock(user)
	mu.Lock()
	if _, err := os.Lstat(filepath.Join(root, topName)); err == nil {
		mu.Unlock()
		return done, true // there already: replaced, not added
	}
	if n := countMembers(root, max); n >= max {
		mu.Unlock()
		writeError(w, http.StatusForbidden, wire.CodeQuotaExceeded, fmt.Sprintf("your scratch area holds %d collections and files at its top, the most this server allows (max_open_uploads): submit with them, or delete them, before making more", n))
		return done, false
	}
	return mu.Unlock, true
}

// topLock is the lock a user's requests adding an entry at the top of
// their scratch area take.
func (s *Server) topLock(user string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tops == nil {
		s.tops = map[string]*sync.Mutex{}
	}
	mu, ok := s.tops[user]
	if !ok {
		mu = &sync.Mutex{}
		s.tops[user] = mu
	}
	return mu
}

// countMembers counts the entries of dir that are not hidden (uploads being
// written), reading no more of it than it takes to count to limit.
func countMembers(dir string, limit int) int {
	f, err := os.Open(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	for n < limit {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			if !strings.HasPrefix(name, ".") {
				n++
			}
		}
		if err != nil {
			break
		}
	}
	return n
}

// subtreeDepth is how many levels of entries lie below p (0 for a file or
// an empty collection), looking no deeper than limit levels.
func subtreeDepth(p string, limit int) int {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return 0
	}
	deepest := 0
	errDeep := errors.New("deep enough")
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == p {
			return nil
		}
		rel, _ := filepath.Rel(p, q)
		n := strings.Count(rel, string(filepath.Separator)) + 1
		deepest = max(deepest, n)
		if n >= limit {
			return errDeep
		}
		return nil
	})
	return deepest
}
