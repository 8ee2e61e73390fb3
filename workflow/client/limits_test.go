package client

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// Refusals by the server's limits are refusals (exit 4), not
// authentication failures, although some come as HTTP 403.
func TestLimitRefusalsExitRefused(t *testing.T) {
	for _, e := range []*APIError{
		{Status: http.StatusForbidden, Code: wire.CodeQuotaExceeded, Message: "you have 3 chains in progress"},
		{Status: http.StatusRequestEntityTooLarge, Code: wire.CodeTooLarge, Message: "the upload is larger"},
		{Status: http.StatusRequestEntityTooLarge, Code: wire.CodeQuotaExceeded, Message: "your scratch area holds"},
	} {
		if got := ExitCode(e); got != ExitRefused {
			t.Errorf("%+v: exit %d, want %d", e, got, ExitRefused)
		}
		if msg := e.Error(); strings.Contains(msg, "authentication") || !strings.Contains(msg, e.Message) {
			t.Errorf("%+v: message %q", e, msg)
		}
	}
	if got := ExitCode(&APIError{Status: http.StatusForbidden, Code: wire.CodeForbidden}); got != ExitAuth {
		t.Errorf("plain 403: exit %d", got)
	}
}

// A notification target the server refuses (an inner address, an
// unconfirmed e-mail address) is a usage error, exit 2, as the same
// target is when the client itself finds it wrong.
func TestRefusedNotifyTargetExitsUsage(t *testing.T) {
	e := &APIError{Status: http.StatusBadRequest, Code: wire.CodeBadNotifyTarget, Message: "e-mail address v@example.org is not confirmed"}
	if got := ExitCode(e); got != ExitUsage {
		t.Fatalf("exit %d, want %d", got, ExitUsage)
	}
	if got := ExitCode(&APIError{Status: http.StatusBadRequest, Code: wire.CodeBadRequest}); got != ExitRefused {
		t.Fatalf("other bad request: exit %d, want %d", got, ExitRefused)
	}
}
