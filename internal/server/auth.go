package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// NewToken makes a long random secret; only its hash is stored.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// HashToken is how tokens are stored and looked up.
func HashToken(tok string) string {
	s := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(s[:])
}

type userKey struct{}

// errLookup marks a failed look-up of a token (not a token found wanting).
var errLookup = errors.New("looking the token up failed")

// authenticate finds the user of a request: HTTP Basic (user name and token
// as password) or a bearer token. With Basic, the name must be the token's.
func (s *Server) authenticate(r *http.Request) (store.User, error) {
	var tok, name string
	if u, p, ok := r.BasicAuth(); ok {
		tok, name = p, u
	} else if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		tok = strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	if tok == "" || len(tok) > 512 {
		return store.User{}, errors.New("no credentials: give your token (RBOINC_TOKEN) as a bearer token or as the password of HTTP Basic")
	}
	u, err := s.E.Query().UserByToken(r.Context(), HashToken(tok))
	if errors.Is(err, store.ErrNotFound) && looksLikeBoincAuthenticator(tok) {
		// A BOINC account's authenticator logs in as the user linked to
		// that account, as BOINC's remote job submission accepts it.
		u, err = s.E.UserByBoincAuthenticator(r.Context(), tok)
		if errors.Is(err, engine.ErrAccountCheck) {
			return store.User{}, fmt.Errorf("%w: %w", errLookup, err) // 500, retried: the account may be fine
		}
		if err != nil {
			return store.User{}, err
		}
	} else if store.Unreachable(err) {
		return store.User{}, err // not the token's fault: withUser answers 503
	} else if errors.Is(err, store.ErrNotFound) {
		return store.User{}, errors.New("unknown or revoked token")
	} else if err != nil {
		// The look-up itself failed: the token may be fine, so the answer
		// is one the clients retry, not "revoked".
		return store.User{}, fmt.Errorf("%w: %w", errLookup, err)
	}
	if u.Disabled {
		return store.User{}, errors.New("this account is disabled")
	}
	if name != "" && !strings.EqualFold(name, u.Name) {
		return store.User{}, errors.New("the token does not belong to user " + name)
	}
	return u, nil
}

// looksLikeBoincAuthenticator: BOINC's authenticators are 32 lowercase
// hex digits (rboinc's tokens are 64), so other credentials never cost a
// query of BOINC's database.
func looksLikeBoincAuthenticator(tok string) bool {
	if len(tok) != 32 {
		return false
	}
	for _, c := range tok {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// withUser wraps a handler that needs an authenticated user.
func (s *Server) withUser(h func(http.ResponseWriter, *http.Request, store.User)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, err := s.authenticate(r)
		if store.Unreachable(err) {
			s.stateUnavailable(w, r, err)
			return
		}
		if errors.Is(err, errLookup) {
			s.internalError(w, r, err)
			return
		}
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="rboinc"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", err.Error())
			return
		}
		if !s.perUser.take(u.Name) {
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusTooManyRequests, wire.CodeTooManyRequests, fmt.Sprintf("user %s has %d requests in progress already, the most this server takes at once: wait for them, or use fewer parallel clients", u.Name, s.perUser.max))
			return
		}
		defer s.perUser.done(u.Name)
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)), u)
	}
}

// AddUser creates an account and returns its token: shown once, since only
// its hash is kept.
func AddUser(ctx context.Context, db *store.DB, name string) (string, error) {
	if err := naming.CheckUser(name); err != nil {
		return "", err
	}
	tok := NewToken()
	if _, err := db.AddUser(ctx, name, HashToken(tok)); err != nil {
		return "", err
	}
	return tok, nil
}

// RotateToken gives a user a new token and returns it; the old one stops
// working at once.
func RotateToken(ctx context.Context, db *store.DB, name string) (string, error) {
	tok := NewToken()
	if err := db.SetUserToken(ctx, name, HashToken(tok)); err != nil {
		return "", err
	}
	return tok, nil
}
