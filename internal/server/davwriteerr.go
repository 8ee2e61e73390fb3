package server

import (
	"context"
	"errors"
	"net/http"
	"syscall"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/workflow/wire"
)

// The WebDAV library answers most failed writes 405 Method Not Allowed,
// which tells a client its request was wrong. A write that failed on the
// server's side gets the answer that says what happened instead: 507 for
// a full disk (or quota), 500 for anything else the file system refused
// (with a request id, not the file system's error), both logged.

// writeFailure tells how to answer a write that failed with err: ok is
// false for the failures the library answers well itself (a name missing
// or already there, a collection not empty).
func writeFailure(err error) (status int, code, msg string, full, ok bool) {
	if engine.IsNoSpace(err) {
		return http.StatusInsufficientStorage, wire.CodeNoSpace,
			"the server's disk is full: " + err.Error() + " (nothing of this request was kept; try again when space has been freed)", true, true
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return 0, "", "", false, false
	}
	switch errno {
	case syscall.ENOENT, syscall.EEXIST, syscall.ENOTEMPTY, syscall.ENOTDIR, syscall.EISDIR, syscall.EINVAL:
		return 0, "", "", false, false
	case syscall.ENOTSUP:
		return http.StatusInternalServerError, wire.CodeInternal,
			"the file system of the server's scratch areas cannot keep WebDAV properties: a problem of the server's set-up; tell its administrator", false, true
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		return http.StatusInternalServerError, wire.CodeInternal,
			"the server may not write in your scratch area: a problem of the server's set-up; tell its administrator", false, true
	}
	return http.StatusInternalServerError, wire.CodeInternal,
		"the server failed to write in your scratch area (nothing of this request was kept)", false, true
}

// writeFailed makes a failed write the request's answer, unless the
// request was refused for another reason first.
func (p *putState) writeFailed(err error) {
	if p == nil || p.status != 0 || err == nil {
		return
	}
	status, code, msg, full, ok := writeFailure(err)
	if !ok {
		return
	}
	p.status, p.code, p.msg, p.full, p.failed = status, code, msg, full, err
	if status == http.StatusInternalServerError {
		// The file system's error names paths of the server: logged
		// under this id, never shown (see internalError).
		p.reqID = reqid.New()
		p.msg += " (request " + p.reqID + "; the server's log has the details)"
	}
}

// noteWriteErr is writeFailed for the request in ctx; it returns err.
func noteWriteErr(ctx context.Context, err error) error {
	putOf(ctx).writeFailed(err)
	return err
}

// davWriteFailed answers a write the server's file system refused (500 or
// 507, logged), or any other error as a server failure.
func (s *Server) davWriteFailed(w http.ResponseWriter, r *http.Request, err error) {
	st := &putState{}
	st.writeFailed(err)
	if !st.refused() {
		s.fail(w, r, err)
		return
	}
	s.logWriteFailure(r, st)
	writeError(w, st.status, st.code, st.msg)
}

// logWriteFailure logs a write refused by the server's file system.
func (s *Server) logWriteFailure(r *http.Request, st *putState) {
	switch {
	case st.full:
		s.Log.Error("the server's disk is full", "method", r.Method, "path", r.URL.Path, "err", st.failed)
	case st.failed != nil:
		s.Log.Error("writing in a scratch area failed", "request_id", st.reqID, "method", r.Method, "path", r.URL.Path, "err", st.failed)
	}
}

// davWriteDone answers a write that was refused (a limit passed, the file
// system failing) in place of the library's answer, which putWriter held
// back.
func (s *Server) davWriteDone(w http.ResponseWriter, r *http.Request, put *putState) {
	if put == nil || !put.refused() {
		return
	}
	s.logWriteFailure(r, put)
	pw := w.(*putWriter)
	if pw.wrote {
		return // the answer went out before the failure: nothing to replace
	}
	writeError(pw.ResponseWriter, put.status, put.code, put.msg)
}
