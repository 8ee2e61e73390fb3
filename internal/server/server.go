package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/legacy"
	"github.com/rboinc/rboinc/internal/metrics"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/webstatus"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Base is where the API is mounted, as in the original (…/rboinc_cgi).
const Base = "/rboinc_cgi"

// Server serves the API and the WebDAV area of one engine.
type Server struct {
	E   *engine.Engine
	Log *slog.Logger

	mu    sync.Mutex
	locks map[string]*lockManager
	tops  map[string]*sync.Mutex // each user's, held to add an entry at the top of their scratch area
	// listings are each user's turn for a long WebDAV listing.
	listings map[string]chan struct{}

	scratch scratchCache // bytes in each user's WebDAV area, for its quota

	// perUser bounds each user's requests in progress (standalone only).
	perUser *userRequests

	feed eventFeed // wakes the long polls of the events feed

	bodies bodyBudget // bytes of JSON bodies held across all requests
	// bulkStreams counts the bulk answers streaming (maxBulkStreams,
	// maxBulkStreamsPerUser).
	bulkStreams bulkSlots
	// limitDiv divides every route's body limit (set by tests only, see
	// export_test.go: bodies past each limit are sent, and 64 MiB ones
	// took a minute under -race); 0: the limits as written.
	limitDiv int64

	// StatusRefresh is how often the status pages reload themselves
	// (0: webstatus.DefaultRefresh).
	StatusRefresh time.Duration
	// status caches the status pages' handler (doctor's findings for the
	// administrator's view are reused for a minute).
	statusOnce sync.Once
	status     *webstatus.Handler
	metrics    *metrics.Metrics
}

// New makes a server.
func New(e *engine.Engine, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{E: e, Log: log, locks: map[string]*lockManager{}}
	if e != nil {
		s.bodies.max = e.Cfg.MaxJSONInFlight
	}
	return s
}

// Handler routes every request.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	alive := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Remote boinc CGI is alive.\n")
	}
	mux.HandleFunc("GET "+Base, alive)
	mux.HandleFunc("GET "+Base+"/{$}", alive)
	api := Base
	mux.HandleFunc("GET "+api+wire.PathWhoAmI, s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		writeJSON(w, wire.WhoAmI{User: u.Name})
	}))
	mux.HandleFunc("GET "+api+wire.PathQueues, s.withUser(s.queues))
	mux.HandleFunc("GET "+api+wire.PathQueues+"/{name}", s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.Queue(r.PathValue("name")))
	}))
	mux.HandleFunc("POST "+api+wire.PathMissing, s.withUser(postDecoded(s, listBody, decodeMissing, func(ctx context.Context, u store.User, req wire.MissingRequest) (wire.MissingResponse, error) {
		return s.E.Missing(ctx, u, req.MD5s)
	})))
	mux.HandleFunc("POST "+api+wire.PathUploads, s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.NewUpload(r.Context(), u))
	}))
	mux.HandleFunc("HEAD "+api+wire.PathUploads+"/{id}/{md5}", s.withUser(s.uploadPart))
	mux.HandleFunc("PUT "+api+wire.PathUploads+"/{id}/{md5}", s.withUser(s.appendUpload))
	mux.HandleFunc("DELETE "+api+wire.PathUploads+"/{id}", s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.DiscardUpload(r.Context(), u, r.PathValue("id")))
	}))
	mux.HandleFunc("POST "+api+wire.PathSubmit, s.withUser(post(s, submitBody, s.submit)))
	mux.HandleFunc("POST "+api+wire.PathSubmitInline, s.withUser(s.submitInline))
	mux.HandleFunc("GET "+api+wire.PathStatus, s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		q := r.URL.Query()
		if q.Get("boinc") == "1" {
			s.answer(w, r)(s.E.StatusBoinc(r.Context(), u, q.Get("group"), q.Get("name")))
			return
		}
		s.answer(w, r)(s.E.StatusWhere(r.Context(), u, q.Get("group"), q.Get("name")))
	}))
	mux.HandleFunc("GET "+api+wire.PathProgress, s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.Progress(r.Context(), u, r.URL.Query().Get("group")))
	}))
	mux.HandleFunc("GET "+api+wire.PathGridStatus, s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.GridStatus(r.Context(), u, r.URL.Query().Get("group")))
	}))
	mux.HandleFunc("POST "+api+wire.PathStop, s.withUser(post(s, controlBody, s.E.Stop)))
	mux.HandleFunc("POST "+api+wire.PathResume, s.withUser(post(s, controlBody, s.E.Resume)))
	mux.HandleFunc("POST "+api+wire.PathExtend, s.withUser(post(s, controlBody, s.E.Extend)))
	mux.HandleFunc("POST "+api+wire.PathPriority, s.withUser(post(s, controlBody, s.E.SetPriority)))
	mux.HandleFunc("POST "+api+wire.PathAbort, s.withUser(post(s, controlBody, s.E.Abort)))
	mux.HandleFunc("GET "+api+wire.PathEvents, s.withUser(s.events))
	mux.HandleFunc("POST "+api+wire.PathPurge, s.withUser(post(s, controlBody, s.E.Purge)))
	mux.HandleFunc("GET "+api+wire.PathResults, s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
		q := r.URL.Query()
		s.answer(w, r)(s.E.ResultsFor(r.Context(), u, q.Get("consumer"), q.Get("group"), q.Get("name")))
	}))
	mux.HandleFunc("GET "+api+wire.PathFiles+"/{group}/{file}", s.withUser(s.file))
	mux.HandleFunc("POST "+api+wire.PathFilesBulk, s.withUser(s.filesBulk))
	mux.HandleFunc("POST "+api+wire.PathAck, s.withUser(postDecoded(s, listBody, decodeAck, s.E.Ack)))
	s.batchRoutes(mux, api)
	s.notifyRoutes(mux, api)
	mux.Handle(wire.DAVPrefix, s.withUser(s.dav))
	// The status pages, for people with a browser.
	s.statusOnce.Do(func() {
		s.status = webstatus.New(s.E, s.authenticate, s.Log)
		s.status.Refresh = s.StatusRefresh
		s.metrics = metrics.New(s.E.Query(), s.Log)
	})
	s.status.Register(mux, Base)
	s.metrics.Register(mux, Base, s.authenticate)
	// The original RBoinc protocol, for the unmodified Perl clients.
	legacy.New(s.E, s.Log, s.authenticate).Register(mux, Base)
	return s.metrics.Instrument(withAPIHint(mux))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(wire.Error{Error: msg, Code: code})
}

// fail maps an engine error to an HTTP answer; internal errors are logged
// and answered without their text (internalError).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch engine.KindOf(err) {
	case engine.KindBadRequest:
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, err.Error())
	case engine.KindBadTarget:
		writeError(w, http.StatusBadRequest, wire.CodeBadNotifyTarget, err.Error())
	case engine.KindUnknownQueue:
		writeError(w, http.StatusNotFound, wire.CodeUnknownQueue, err.Error())
	case engine.KindNameTaken:
		writeError(w, http.StatusConflict, wire.CodeNameTaken, err.Error())
	case engine.KindMissingContent:
		we := wire.Error{Error: err.Error(), Code: wire.CodeMissingContent}
		var ee *engine.Error
		if errors.As(err, &ee) && len(ee.Missing) <= wire.MaxMissingListed {
			we.Missing = ee.Missing
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		json.NewEncoder(w).Encode(we)
	case engine.KindNotFound:
		writeError(w, http.StatusNotFound, wire.CodeNotFound, err.Error())
	case engine.KindForbidden:
		writeError(w, http.StatusForbidden, wire.CodeForbidden, err.Error())
	case engine.KindQuota:
		writeError(w, http.StatusForbidden, wire.CodeQuotaExceeded, err.Error())
	case engine.KindOtherConsumer:
		writeError(w, http.StatusConflict, wire.CodeOtherConsumer, err.Error())
	case engine.KindTooLarge:
		writeError(w, http.StatusRequestEntityTooLarge, wire.CodeTooLarge, err.Error())
	case engine.KindNoSpace:
		s.Log.Error("the server's disk is full", "method", r.Method, "path", r.URL.Path, "err", err)
		msg := err.Error()
		if !strings.HasPrefix(msg, "the server's disk is full") {
			msg = "the server's disk is full: " + msg + " (nothing of this request was kept; try again when space has been freed)"
		}
		writeError(w, http.StatusInsufficientStorage, wire.CodeNoSpace, msg)
	case engine.KindUnavailable:
		s.stateUnavailable(w, r, err)
	case engine.KindOutcomeUnknown:
		s.outcomeUnknown(w, r, err)
	case engine.KindMisconfigured:
		s.misconfigured(w, r, err)
	default:
		s.internalError(w, r, err)
	}
}

// decodeBody reads a request body strictly: one JSON object of the
// expected shape, no unknown fields (identity, for one, cannot be asserted
// in a body), nothing after it.
func decodeBody(body io.Reader, v any) error {
	br := bufio.NewReader(body)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return errors.New("the body is empty; want a JSON object")
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		br.UnreadByte()
		if c != '{' {
			return errors.New("the body is not a JSON object")
		}
		break
	}
	dec := json.NewDecoder(br)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	_, err := dec.Token()
	return endOfBody(err)
}

func (s *Server) queues(w http.ResponseWriter, r *http.Request, u store.User) {
	qs, errs := s.E.Queues.List()
	for _, err := range errs {
		s.Log.Warn("bad queue templates", "err", err)
	}
	out := make([]wire.QueueSummary, 0, len(qs))
	for _, q := range qs {
		out = append(out, wire.QueueSummary{Name: q.Name, Application: q.Application, Description: q.Description})
	}
	writeJSON(w, out)
}

// post adapts an engine call taking a JSON body of at most limit bytes.
func post[Req, Resp any](s *Server, limit int64, call func(context.Context, store.User, Req) (Resp, error)) func(http.ResponseWriter, *http.Request, store.User) {
	return postDecoded(s, limit, func(r io.Reader, v *Req) error { return decodeBody(r, v) }, call)
}

// postDecoded is post with its own decoder (one that counts a list as it
// reads it).
func postDecoded[Req, Resp any](s *Server, limit int64, decode func(io.Reader, *Req) error, call func(context.Context, store.User, Req) (Resp, error)) func(http.ResponseWriter, *http.Request, store.User) {
	return func(w http.ResponseWriter, r *http.Request, u store.User) {
		body, ok := s.openBody(w, r, limit)
		if !ok {
			return
		}
		defer body.release()
		var req Req
		if err := decode(body, &req); err != nil {
			s.bodyFailed(w, r, limit, "malformed JSON request", err)
			return
		}
		resp, err := call(r.Context(), u, req)
		s.feed.kick() // a change made here wakes its waiters now, not at the next look
		s.answer(w, r)(resp, err)
	}
}

// get adapts an engine call taking the group and name query parameters.
func get[Resp any](s *Server, call func(context.Context, store.User, string, string) (Resp, error)) func(http.ResponseWriter, *http.Request, store.User) {
	return func(w http.ResponseWriter, r *http.Request, u store.User) {
		q := r.URL.Query()
		s.answer(w, r)(call(r.Context(), u, q.Get("group"), q.Get("name")))
	}
}

// answer writes an engine call's result or error.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) func(any, error) {
	return func(resp any, err error) {
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, resp)
	}
}

func (s *Server) file(w http.ResponseWriter, r *http.Request, u store.User) {
	f, p, err := s.E.OpenResultFor(r.Context(), u, r.URL.Query().Get("consumer"), r.PathValue("group"), r.PathValue("file"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("ETag", `"`+p.MD5+`"`)
	http.ServeContent(w, r, p.File, fi.ModTime(), f)
}
