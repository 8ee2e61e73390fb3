package boincdb

// BOINC's state codes (db/boinc_db_types.h), as stored in its tables.
const (
	// workunit.assimilate_state
	AssimilateInit  = 0
	AssimilateReady = 1
	AssimilateDone  = 2

	// workunit.file_delete_state and result.file_delete_state
	FileDeleteInit  = 0
	FileDeleteReady = 1
	FileDeleteDone  = 2
	FileDeleteError = 3

	// result.server_state
	ServerInactive   = 1
	ServerUnsent     = 2
	ServerInProgress = 4
	ServerOver       = 5

	// result.outcome
	OutcomeInit           = 0
	OutcomeSuccess        = 1
	OutcomeCouldntSend    = 2
	OutcomeClientError    = 3
	OutcomeNoReply        = 4
	OutcomeDidntNeed      = 5
	OutcomeValidateError  = 6
	OutcomeClientDetached = 7

	// result.validate_state
	ValidateInit         = 0
	ValidateValid        = 1
	ValidateInvalid      = 2
	ValidateNoCheck      = 3
	ValidateInconclusive = 4
	ValidateTooLate      = 5

	// workunit.error_mask bits
	ErrCouldntSend    = 1
	ErrTooManyErrors  = 2
	ErrTooManySuccess = 4
	ErrTooManyTotal   = 8
	ErrCancelled      = 16
	ErrNoCanonical    = 32

	// workunit.transitioner_flags
	TransitionNone         = 1 // assigned multi-instance job: the scheduler makes its results
	TransitionNoNewResults = 2 // assigned job: the transitioner makes none

	// assignment.target_type
	AssignNone = 0
	AssignHost = 1
	AssignUser = 2
	AssignTeam = 3
)

// Never is the transition_time of a work unit the transitioner need not
// look at again (BOINC uses INT_MAX).
const Never = 1<<31 - 1

// ErrorMaskText spells out a work unit's error_mask bits.
func ErrorMaskText(m int) string {
	names := []struct {
		bit  int
		text string
	}{{ErrCouldntSend, "couldn't send"}, {ErrTooManyErrors, "too many error results"},
		{ErrTooManySuccess, "too many success results"}, {ErrTooManyTotal, "too many total results"},
		{ErrCancelled, "cancelled"}, {ErrNoCanonical, "no canonical result"}}
	out := ""
	for _, n := range names {
		if m&n.bit != 0 {
			if out != "" {
				out += ", "
			}
			out += n.text
		}
	}
	if out == "" {
		return "unknown"
	}
	return out
}
