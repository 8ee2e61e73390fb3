package legacy

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// The two CGI programs of the original, below the base URL.
const (
	SubmitScript   = "boinc_submit_server.pl"
	RetrieveScript = "boinc_retrieve_server.pl"
)

// ServerRevision is sent where the original sent its SVN keyword.
const ServerRevision = "rboinc"

// Root elements of the two CGIs' answers.
const (
	submitRoot   = "SubmitStatus"
	retrieveRoot = "RetrieveStatus"
)

// aliveText is the answer to a request without fields.
const aliveText = "Remote boinc CGI is alive.\n"

// maxForm bounds a request's form body; the original clients send a few
// dozen bytes.
const maxForm = 64 << 10

// identRE is the original's rule for group, name and queue names.
var identRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// Handler serves the original protocol for one engine.
type Handler struct {
	E   *engine.Engine
	Log *slog.Logger
	// Auth finds the user of a request from its credentials (the server's
	// own authentication, shared with the rest of the API).
	Auth func(*http.Request) (store.User, error)
}

// New makes a handler.
func New(e *engine.Engine, log *slog.Logger, auth func(*http.Request) (store.User, error)) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{E: e, Log: log, Auth: auth}
}

// Register adds the two endpoints below base (e.g. /rboinc_cgi) to mux.
func (h *Handler) Register(mux *http.ServeMux, base string) {
	mux.HandleFunc(base+"/"+SubmitScript, h.submit)
	mux.HandleFunc(base+"/"+RetrieveScript, h.retrieve)
}

// form reads the fields of a POST body or a GET query, as CGI::Lite did.
// A field given twice counts once (its first value).
func form(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.Form, nil
}

func alive(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, aliveText)
}

// reply writes an answer: always status 200 and text/plain, as the
// original CGIs did; errors travel inside the XML.
func reply(w http.ResponseWriter, root string, h hash) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write(xmlOut(root, h))
}

func fail(w http.ResponseWriter, root, reason string) {
	reply(w, root, hash{"Failure": hash{"Reason": reason}})
}

// user authenticates a request, answering a Failure when it cannot: the
// Perl clients print the reason, while an HTTP 401 would reach the
// scientist as "server may be down".
func (h *Handler) user(w http.ResponseWriter, r *http.Request, root string) (store.User, bool) {
	u, err := h.Auth(r)
	if err != nil {
		fail(w, root, "(authentication error) "+err.Error()+
			" (for the original clients, write both into the URL: RBOINC_URL=http://USER:TOKEN@host/rboinc_cgi)")
		return u, false
	}
	h.sweep(u)
	return u, true
}

// engineReason words an engine error for a Failure; internal errors are
// logged in full under a request id, and answered with the id only. The
// state database out of reach, or gone during the commit, is said in
// words of the user's: its error names the database's address.
func (h *Handler) engineReason(r *http.Request, err error) string {
	switch engine.KindOf(err) {
	case engine.KindInternal:
		id := reqid.New()
		h.Log.Error("original-protocol request failed", "request_id", id, "path", r.URL.Path, "err", err)
		return reqid.Message(id)
	case engine.KindUnavailable:
		h.Log.Warn("original-protocol request: the state database is out of reach", "path", r.URL.Path, "err", err)
		return "the server cannot reach its database at the moment (a restart?); nothing is lost: send the request again in a few minutes"
	case engine.KindMisconfigured:
		id := reqid.New()
		msg, detail := err.Error(), err
		if ee := (*engine.Error)(nil); errors.As(err, &ee) {
			msg, detail = ee.Msg, ee.Err
		}
		h.Log.Error("original-protocol request: queue misconfigured", "request_id", id, "path", r.URL.Path, "err", detail)
		return msg + "; the server's log has it under request " + id
	case engine.KindOutcomeUnknown:
		h.Log.Warn("original-protocol request: the state database went away during the commit", "path", r.URL.Path, "err", err)
		return "the server lost its database while recording this request: it may have been recorded or not; look at the status before doing it again (a submission or a purge may simply be sent again)"
	}
	return err.Error()
}

// davURL is the caller's own WebDAV area, with the caller's credentials
// in it: the original clients open the URL they are given as is, and
// HTTP::DAV sends the user and password found in it.
func davURL(r *http.Request, u store.User) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	d := &url.URL{Scheme: scheme, Host: r.Host, Path: wire.DAVPrefix + u.Name + "/"}
	if _, tok, ok := r.BasicAuth(); ok {
		// The canonical name: Apache's mod_dav compares it with the path.
		d.User = url.UserPassword(u.Name, tok)
	}
	return d.String()
}

// clientIP is REMOTE_ADDR without the port.
func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// stagingRE matches the collections the original protocol creates in a
// user's WebDAV area: uploads (by the client) and retrievals (by us).
var stagingRE = regexp.MustCompile(`^(up|retr)[0-9]{6}$`)

// sweep removes the user's upload and retrieval collections untouched
// for a day: the client deletes them after use, unless it was
// interrupted.
func (h *Handler) sweep(u store.User) {
	root := h.E.DAVRoot(u)
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	old := time.Now().Add(-engine.UploadLifetime)
	for _, de := range ents {
		if !de.IsDir() || !stagingRE.MatchString(de.Name()) {
			continue
		}
		if fi, err := de.Info(); err == nil && fi.ModTime().Before(old) {
			if err := os.RemoveAll(filepath.Join(root, de.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				h.Log.Warn("removing a stale scratch collection", "user", u.Name, "dir", de.Name(), "err", err)
			}
		}
	}
}
