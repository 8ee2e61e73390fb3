package client

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/rboinc/rboinc/workflow/wire"
)

// Exit codes of rboinc-submit and rboinc-retrieve (rboinc-server uses 0,
// 1 and 2 of the same table; docs/scientist.md "Exit codes" has all four commands):
//
//	0  success
//	1  any other failure (server-side error, local I/O error, interrupted)
//	2  usage error: bad flag or value, missing mandatory option, argument
//	   or parameter, unknown subcommand, unreadable input file, missing
//	   confirmation for -stop/-purge, a --root that is not a server root,
//	   a notification target the server refuses (wire.CodeBadNotifyTarget)
//	3  the server cannot be reached
//	4  the server refused the request: unknown queue, name already used,
//	   no such group or chain, invalid request, a quota or size limit
//	5  authentication failed (HTTP 401 or 403)
//	6  another rboinc-retrieve holds the lock on the download directory
//	7  some files failed to download; the others were kept (and, unless
//	   -keep, acknowledged)
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitUnreachable = 3
	ExitRefused     = 4
	ExitAuth        = 5
	ExitLocked      = 6
	ExitPartial     = 7
)

var (
	// ErrUsage marks errors in the way a command was called.
	ErrUsage = errors.New("usage error")
	// ErrLocked means another rboinc-retrieve works in the same directory.
	ErrLocked = errors.New("directory locked by another rboinc-retrieve")
	// ErrPartial means some downloads failed while others succeeded.
	ErrPartial = errors.New("some files failed to download")
)

// kindError is an error of one of the kinds above, worded for the reader
// without the kind's own text.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// Usagef returns an error that ExitCode maps to ExitUsage.
func Usagef(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrUsage}
}

// ExitCode maps an error to the exit code of the table above. When err
// joins several causes, the first rule that matches any of them wins.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var api *APIError
	isAPI := errors.As(err, &api)
	switch {
	case errors.Is(err, ErrUsage), isAPI && api.Code == wire.CodeBadNotifyTarget:
		return ExitUsage
	case errors.Is(err, ErrLocked):
		return ExitLocked
	case isAPI && (api.Code == wire.CodeQuotaExceeded || api.Code == wire.CodeTooLarge):
		return ExitRefused
	case isAPI && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden):
		return ExitAuth
	case errors.Is(err, ErrUnreachable):
		return ExitUnreachable
	case isAPI && api.Status >= 400 && api.Status < 500:
		return ExitRefused
	case errors.Is(err, ErrPartial):
		return ExitPartial
	}
	return ExitFailure
}
