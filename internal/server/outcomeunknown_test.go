package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A request whose commit the state database did not confirm is answered
// 503 outcome_unknown with Retry-After, not server_busy ("nothing is
// lost: send it again"): an -extend sent again on that word added its
// steps twice.
func TestCommitUnknownIsAnsweredOutcomeUnknown(t *testing.T) {
	s := &Server{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/rboinc_cgi"+wire.PathExtend, nil)
	s.fail(w, r, fmt.Errorf("extending: state database commit: %w: %w", store.ErrCommitUnknown, io.ErrUnexpectedEOF))
	var e wire.Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusServiceUnavailable || e.Code != wire.CodeOutcomeUnknown || w.Header().Get("Retry-After") == "" {
		t.Fatalf("a commit not confirmed: %d %q (Retry-After %q), want 503 %q with Retry-After", w.Code, e.Code, w.Header().Get("Retry-After"), wire.CodeOutcomeUnknown)
	}
	// Still retried by the clients for what is safe to repeat.
	if !client.Transient(&client.APIError{Status: w.Code, Code: e.Code}) {
		t.Error("the clients do not retry an outcome_unknown at all")
	}
}
