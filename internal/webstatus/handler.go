package webstatus

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
)

// Prefix is where the pages are, under the server's base path.
const Prefix = "/status"

// DefaultRefresh is how often a page reloads itself.
const DefaultRefresh = 30 * time.Second

// healthTTL is how long the doctor's findings are reused: the checks run
// programs and read the BOINC project, too much for every reload.
const healthTTL = time.Minute

// Handler serves the status pages of one engine.
type Handler struct {
	E *engine.Engine
	// Auth finds the user of a request (the server's authentication).
	Auth func(*http.Request) (store.User, error)
	Log  *slog.Logger
	// Refresh is how often pages reload themselves (0: DefaultRefresh).
	Refresh time.Duration
	// Health runs the server's checks for the administrator's view
	// (nil: DefaultHealth on the engine's root).
	Health func(context.Context) []Finding
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	base string

	healthMu sync.Mutex
	healthAt time.Time
	health   []Finding
}

// Finding is one result of the server's checks (doctor's), for the
// administrator's view.
type Finding struct {
	Severity string // ok, note, PROBLEM
	Msg      string
}

// DefaultHealth runs doctor's checks on a server root. The program sets
// it (package setup, which holds the checks, imports the server, which
// imports this package); when nil, the view says the checks are absent.
var DefaultHealth func(ctx context.Context, root string) []Finding

// New makes the handler; Register mounts it.
func New(e *engine.Engine, auth func(*http.Request) (store.User, error), log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{E: e, Auth: auth, Log: log}
}

// Register mounts the pages under base (the server's /rboinc_cgi).
func (h *Handler) Register(mux *http.ServeMux, base string) {
	h.base = base
	p := base + Prefix
	mux.HandleFunc("GET "+p, h.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
	}))
	mux.HandleFunc("GET "+p+"/{$}", h.withUser(h.overview))
	mux.HandleFunc("GET "+p+"/{group}", h.withUser(h.group))
	mux.HandleFunc("GET "+p+"/{group}/{$}", h.withUser(h.group))
	mux.HandleFunc("GET "+p+"/{group}/{name}", h.withUser(h.chain))
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) refresh() int {
	if h.Refresh <= 0 {
		return int(DefaultRefresh.Seconds())
	}
	return max(1, int(h.Refresh.Seconds()))
}

// withUser refuses a request without valid credentials with 401 and a
// Basic challenge, which makes a browser ask for the name and token.
func (h *Handler) withUser(fn func(http.ResponseWriter, *http.Request, store.User)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		u, err := h.Auth(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="rboinc", charset="UTF-8"`)
			h.errorPage(w, http.StatusUnauthorized, "Log in with your rboinc user name and token (the token is the password). "+err.Error())
			return
		}
		fn(w, r, u)
	}
}

// secure sets the headers of every page: nothing runs but our markup (the
// pages have no script), nothing is cached or framed, no address leaks.
func secure(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
}

// render writes a page whole, or an error page when it cannot be made.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		h.Log.Error("status page", "path", r.URL.Path, "err", err)
		h.errorPage(w, http.StatusInternalServerError, "The page could not be made; the server's log says why.")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func (h *Handler) errorPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	pages.ExecuteTemplate(w, "error", Page{Title: http.StatusText(status), Base: h.base, Message: msg})
}

// fail answers an error of the store: a missing thing is 404, the rest is
// logged and 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		h.errorPage(w, http.StatusNotFound, err.Error())
		return
	}
	h.Log.Error("status page", "path", r.URL.Path, "err", err)
	h.errorPage(w, http.StatusInternalServerError, "The page could not be made; the server's log says why.")
}

// Page is what every page's frame shows.
type Page struct {
	Title   string
	Base    string // the server's base path, for links
	User    string
	Admin   bool
	Refresh int
	Message string
	Now     time.Time
}

func (h *Handler) frame(u store.User, title string) Page {
	return Page{Title: title, Base: h.base, User: u.Name, Admin: u.Admin, Refresh: h.refresh(), Now: h.now()}
}

// badNames refuses path segments too long to name anything, before any
// query (the queries take them as parameters; the user's own chains are
// all they can find).
func badNames(segs ...string) bool {
	for _, s := range segs {
		if s == "" || len(s) > 4*naming.MaxIdentLen {
			return true
		}
	}
	return false
}

// link makes the path of a status page from its segments.
func link(base string, segs ...string) string {
	p := base + Prefix + "/"
	for i, s := range segs {
		if i > 0 {
			p += "/"
		}
		p += url.PathEscape(s)
	}
	return p
}
