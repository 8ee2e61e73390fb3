package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/webdav"
)

// davLock is one WebDAV lock of a user's scratch area.
type davLock struct {
	token   string
	details webdav.LockDetails
	shared  bool
	held    bool      // taken by a LOCK request (not the library's for one request): counts toward max_dav_locks
	expiry  time.Time // zero: never (only the library's, released when its request ends)
}

// lockManager is the scratch area's webdav.LockSystem, with shared locks
// beside exclusive ones (the library's own has exclusive ones only) and
// If-header conditions evaluated whole: lock tokens, entity tags, Not.
type lockManager struct {
	mu    sync.Mutex
	locks map[string]*davLock
	// etag gives a resource's current entity tag ("" when it has none).
	etag func(name string) string
	// max bounds the locks taken by LOCK requests (0: no limit).
	max int
	// refs counts the requests using this manager: one with none and no
	// locks may be forgotten (Server.expireLocks).
	refs int
}

// errTooManyLocks: the user holds max_dav_locks locks already.
var errTooManyLocks = errors.New("too many locks")

// maxLockDuration is the longest lock this server grants: a longer
// Timeout, or Infinite, is granted as this (RFC 4918 10.7 lets a server
// choose), so that a lock left behind goes away on its own.
const maxLockDuration = time.Hour

// grantedDuration is the timeout granted for the one asked (-1: infinite).
func grantedDuration(d time.Duration) time.Duration {
	if d < 0 || d > maxLockDuration {
		return maxLockDuration
	}
	return d
}

func newLockManager(etag func(string) string) *lockManager {
	return &lockManager{locks: map[string]*davLock{}, etag: etag}
}

// covers tells whether lock l applies to resource name.
func (l *davLock) covers(name string) bool {
	return name == l.details.Root || !l.details.ZeroDepth && isBelow(name, l.details.Root)
}

// isBelow tells whether name is strictly inside collection root.
func isBelow(name, root string) bool {
	if root == "/" {
		return name != "/"
	}
	return strings.HasPrefix(name, root+"/")
}

func (m *lockManager) expire(now time.Time) {
	for t, l := range m.locks {
		if !l.expiry.IsZero() && now.After(l.expiry) {
			delete(m.locks, t)
		}
	}
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return "opaquelocktoken:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Create makes an exclusive lock (the library's LOCK and its locks for the
// length of a request without If header).
func (m *lockManager) Create(now time.Time, d webdav.LockDetails) (string, error) {
	return m.create(now, d, false, false)
}

// create makes a lock; held: one a LOCK request asked for, bounded in
// number and duration.
func (m *lockManager) create(now time.Time, d webdav.LockDetails, shared, held bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	d.Root = path.Clean("/" + d.Root)
	n := 0
	for _, l := range m.locks {
		overlap := l.covers(d.Root) || !d.ZeroDepth && isBelow(l.details.Root, d.Root)
		if overlap && !(shared && l.shared) {
			return "", webdav.ErrLocked
		}
		if l.held {
			n++
		}
	}
	if held {
		if m.max > 0 && n >= m.max {
			return "", errTooManyLocks
		}
		d.Duration = grantedDuration(d.Duration)
	}
	l := &davLock{token: newToken(), details: d, shared: shared, held: held}
	if d.Duration >= 0 {
		l.expiry = now.Add(d.Duration)
	}
	m.locks[l.token] = l
	return l.token, nil
}

func cleanName(n string) string {
	if n == "" {
		return ""
	}
	return path.Clean("/" + n)
}

// Refresh renews a lock (the library's refresh, kept for its interface).
func (m *lockManager) Refresh(now time.Time, token string, duration time.Duration) (webdav.LockDetails, error) {
	l, ok := m.refresh(now, token, "", duration)
	if !ok {
		return webdav.LockDetails{}, webdav.ErrNoSuchLock
	}
	return l.details, nil
}

// refresh renews the lock token names, when it is live and (unless name is
// empty) covers name; it returns the lock as renewed.
func (m *lockManager) refresh(now time.Time, token, name string, duration time.Duration) (davLock, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	l, ok := m.locks[token]
	if !ok || name != "" && !l.covers(cleanName(name)) {
		return davLock{}, false
	}
	if l.held {
		duration = grantedDuration(duration)
	}
	l.details.Duration = duration
	l.expiry = time.Time{}
	if duration >= 0 {
		l.expiry = now.Add(duration)
	}
	return *l, true
}

func (m *lockManager) Unlock(now time.Time, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	if _, ok := m.locks[token]; !ok {
		return webdav.ErrNoSuchLock
	}
	delete(m.locks, token)
	return nil
}

// drop removes the locks of name and of everything below it.
func (m *lockManager) drop(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = cleanName(name)
	for t, l := range m.locks {
		if l.details.Root == name || isBelow(l.details.Root, name) {
			delete(m.locks, t)
		}
	}
}

// lookup returns a copy of the lock token names.
func (m *lockManager) lookup(token string) (davLock, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[token]
	if !ok {
		return davLock{}, false
	}
	return *l, true
}

// guard is a resource a request changes, whose locks it must hold a token
// of: tree when the request changes everything below it too (DELETE, the
// source of a MOVE, a destination overwritten), member when it adds it to
// or removes it from its collection, which a lock on the collection
// (even of depth 0) protects.
type guard struct {
	name         string
	tree, member bool
}

// applies tells whether lock l protects what g changes.
func (g guard) applies(l *davLock) bool {
	return l.covers(g.name) ||
		g.tree && isBelow(l.details.Root, g.name) ||
		g.member && g.name != "/" && l.details.Root == path.Dir(g.name)
}

// check decides a request against the If header h (nil when there is
// none) and the locks: 412 when h is given and none of its lists holds
// (untagged lists are about reqName and, as RFC 2518 had it, about every
// resource the request changes, so a lock token in one holds for a lock
// guarding any of them; resolve maps a tag to a resource, false for one
// outside the area), 423 when a guarded resource is locked
// and the header holds no token of its exclusive lock, or of any of its
// shared ones. 0: the request may go on.
func (m *lockManager) check(now time.Time, h *ifHeader, reqName string, resolve func(string) (string, bool), guards ...guard) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	for i := range guards {
		guards[i].name = cleanName(guards[i].name)
	}
	submitted := map[string]bool{}
	if h != nil {
		hold := make([]bool, len(h.lists))
		anyHolds := false
		for i, l := range h.lists {
			name, ok, also := cleanName(reqName), true, guards
			if l.tag != "" {
				name, ok = resolve(l.tag)
				also = nil
			}
			hold[i] = ok && m.listHolds(name, also, l.conds)
			anyHolds = anyHolds || hold[i]
		}
		if !anyHolds {
			return http.StatusPreconditionFailed
		}
		submitted = h.submitted(hold)
	}
	for _, g := range guards {
		var any, anySubmitted bool
		for t, l := range m.locks {
			if !g.applies(l) {
				continue
			}
			any = true
			if submitted[t] {
				anySubmitted = true
			} else if !l.shared {
				return webdav.StatusLocked
			}
		}
		if any && !anySubmitted {
			return webdav.StatusLocked
		}
	}
	return 0
}

// listHolds: every condition of a list holds for resource name: a lock
// token names a live lock on it (or one of the guards), an entity tag is
// its current one; Not inverts. m.mu is held.
func (m *lockManager) listHolds(name string, guards []guard, conds []ifCond) bool {
	for _, c := range conds {
		var holds bool
		if c.token != "" {
			l, ok := m.locks[c.token]
			holds = ok && l.covers(name)
			for _, g := range guards {
				holds = holds || ok && g.applies(l)
			}
		} else {
			cur := ""
			if m.etag != nil {
				cur = m.etag(name)
			}
			holds = cur != "" && strings.TrimPrefix(c.etag, "W/") == strings.TrimPrefix(cur, "W/")
		}
		if holds == c.not {
			return false
		}
	}
	return true
}

// checkedLocks is the lock system handed to the WebDAV library for a
// request whose If header and locks check has already passed: the
// library's own evaluation (one list at a time, the Request-URI's locks
// unchecked for a list tagged with another resource) is not used.
type checkedLocks struct{ *lockManager }

// checkedIf is the state token of the If header the library is handed in
// place of one already checked.
const checkedIf = "urn:x-rboinc:if-header-checked"

func (checkedLocks) Confirm(time.Time, string, string, ...webdav.Condition) (func(), error) {
	return func() {}, nil
}

// lockSystem is the user's WebDAV locks (in memory, as the library's own:
// a restart forgets them), with entity tags read from fsys. The request
// calls release when it is done with them.
func (s *Server) lockSystem(user string, fsys *scratchFS) (ls *lockManager, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls, ok := s.locks[user]
	if !ok {
		ls = newLockManager(nil)
		s.locks[user] = ls
	}
	ls.refs++
	ls.mu.Lock()
	ls.etag = fsys.etag
	ls.max = s.E.Cfg.MaxDAVLocks
	ls.mu.Unlock()
	return ls, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		ls.refs--
	}
}

// expireLocks frees the locks expired by now, and forgets the lock
// managers of users with none left and no request in progress, so that
// locks nobody comes back for take no memory.
func (s *Server) expireLocks(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for user, m := range s.locks {
		m.mu.Lock()
		m.expire(now)
		idle := len(m.locks) == 0 && m.refs == 0
		m.mu.Unlock()
		if idle {
			delete(s.locks, user)
		}
	}
}
