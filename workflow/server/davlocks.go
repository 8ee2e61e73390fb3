package server

import (
	"crypto/rand"
	"encoding/hex"
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
	expiry  time.Time // zero: never
}

// lockManager is the scratch area's webdav.LockSystem, with shared locks
// beside exclusive ones (the library's own has exclusive ones only) and
// If-header conditions evaluated whole: lock tokens, entity tags, Not.
type lockManager struct {
	mu    sync.Mutex
	locks map[string]*davLock
	// etag gives a resource's current entity tag ("" when it has none).
	etag func(name string) string
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
	return m.create(now, d, false)
}

func (m *lockManager) create(now time.Time, d webdav.LockDetails, shared bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	d.Root = path.Clean("/" + d.Root)
	for _, l := range m.locks {
		overlap := l.covers(d.Root) || !d.ZeroDepth && isBelow(l.details.Root, d.Root)
		if overlap && !(shared && l.shared) {
			return "", webdav.ErrLocked
		}
	}
	l := &davLock{token: newToken(), details: d, shared: shared}
	if d.Duration >= 0 {
		l.expiry = now.Add(d.Duration)
	}
	m.locks[l.token] = l
	return l.token, nil
}

// Confirm checks one list of an If header against resources name0 and name1
// (either may be empty): every condition must hold (a lock token names a
// live lock on name0, an entity tag is name0's, Not inverts), and a
// resource under locks may only be changed with a token of one of them,
// of the exclusive one if there is one.
func (m *lockManager) Confirm(now time.Time, name0, name1 string, conditions ...webdav.Condition) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	name0, name1 = cleanName(name0), cleanName(name1)
	submitted := map[string]bool{}
	for _, c := range conditions {
		var holds bool
		switch {
		case c.Token != "":
			l, ok := m.locks[c.Token]
			holds = ok && (name0 == "" || l.covers(name0))
			if holds && !c.Not {
				submitted[c.Token] = true
			}
		case c.ETag != "":
			holds = name0 != "" && m.etag != nil && strings.Trim(m.etag(name0), `"`) == strings.Trim(c.ETag, `"`)
		}
		if holds == c.Not {
			return nil, webdav.ErrConfirmationFailed
		}
	}
	for _, name := range []string{name0, name1} {
		if name == "" {
			continue
		}
		var any, anySubmitted bool
		for t, l := range m.locks {
			if !l.covers(name) {
				continue
			}
			any = true
			if submitted[t] {
				anySubmitted = true
			} else if !l.shared {
				return nil, webdav.ErrConfirmationFailed
			}
		}
		if any && !anySubmitted {
			return nil, webdav.ErrConfirmationFailed
		}
	}
	return func() {}, nil
}

func cleanName(n string) string {
	if n == "" {
		return ""
	}
	return path.Clean("/" + n)
}

func (m *lockManager) Refresh(now time.Time, token string, duration time.Duration) (webdav.LockDetails, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	l, ok := m.locks[token]
	if !ok {
		return webdav.LockDetails{}, webdav.ErrNoSuchLock
	}
	l.details.Duration = duration
	l.expiry = time.Time{}
	if duration >= 0 {
		l.expiry = now.Add(duration)
	}
	return l.details, nil
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

// shared tells whether token names a shared lock.
func (m *lockManager) shared(token string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[token]
	return ok && l.shared
}
