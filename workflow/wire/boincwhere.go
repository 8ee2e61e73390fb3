package wire

import "time"

// Where a running chain's current work unit is in BOINC
// (ChainStatus.BoincState), read from BOINC's database.
const (
	BoincUnsent     = "unsent"      // BOINC has sent it to no volunteer yet
	BoincInProgress = "in_progress" // a volunteer computes it (since BoincSince)
	BoincValidating = "validating"  // results are back; BOINC's validator is at it
)

// BoincWhere is where one work unit is in BOINC, and since when (the
// sent_time of its result in progress, Unix seconds).
type BoincWhere struct {
	State string
	Since int64
}

// WhereInBoinc words a chain's BoincState for a scientist, "" when the
// status has none.
func (c ChainStatus) WhereInBoinc() string {
	return WhereWords(c.BoincState, c.BoincSince)
}

// WhereWords words a BOINC state (BoincUnsent...) and its since.
func WhereWords(state string, since int64) string {
	switch state {
	case BoincUnsent:
		return "waiting in BOINC, sent to no volunteer yet"
	case BoincInProgress:
		if since > 0 {
			return "running on a volunteer since " + time.Unix(since, 0).UTC().Format("2006-01-02 15:04 UTC")
		}
		return "running on a volunteer"
	case BoincValidating:
		return "being validated by BOINC"
	}
	return ""
}
