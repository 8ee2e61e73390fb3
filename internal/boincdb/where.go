package boincdb

import (
	"context"
	"fmt"
)

// Where a work unit is in BOINC (Place.State).
const (
	PlaceUnsent     = "unsent"      // BOINC has sent it to no volunteer yet
	PlaceInProgress = "in_progress" // a volunteer computes it (since Place.Since)
	PlaceValidating = "validating"  // results are back; BOINC's validator is at it
)

// Place is where one work unit is in BOINC, and since when (the sent_time
// of its result in progress, Unix seconds).
type Place struct {
	State string
	Since int64
}

// whereBatch is how many work units one query of Where names.
const whereBatch = 1000

// Where says, for work units by name, where each is in BOINC: waiting to
// be sent (every result unsent, or none made yet), running on a volunteer
// (a result in progress; Since its earliest sent_time) or being validated
// (results back, the validator not done). A work unit BOINC has decided,
// or does not hold, is left out. It reads BOINC's database in batches of
// work units, never one query per work unit.
func (d *DB) Where(ctx context.Context, wuNames []string) (map[string]Place, error) {
	type acc struct {
		needValidate, canonical, errMask int64
		unsent, inProgress, pendingValid int
		since                            int64
	}
	accs := map[string]*acc{}
	for len(wuNames) > 0 {
		n := min(len(wuNames), whereBatch)
		rows, err := d.QueryContext(ctx, `SELECT w.name, w.need_validate, w.canonical_resultid, w.error_mask,
			coalesce(r.server_state, 0), coalesce(r.outcome, 0), coalesce(r.validate_state, 0), coalesce(r.sent_time, 0)
			FROM workunit w LEFT JOIN result r ON r.workunitid = w.id WHERE w.name IN `+inList(n), anys(wuNames[:n])...)
		if err != nil {
			return nil, fmt.Errorf("reading where work units are: %w", err)
		}
		for rows.Next() {
			var name string
			var needValidate, canonical, errMask, sent int64
			var st, outcome, validate int
			if err := rows.Scan(&name, &needValidate, &canonical, &errMask, &st, &outcome, &validate, &sent); err != nil {
				rows.Close()
				return nil, err
			}
			a := accs[name]
			if a == nil {
				a = &acc{needValidate: needValidate, canonical: canonical, errMask: errMask}
				accs[name] = a
			}
			switch {
			case st == ServerUnsent || st == ServerInactive:
				a.unsent++
			case st == ServerInProgress:
				a.inProgress++
				if sent > 0 && (a.since == 0 || sent < a.since) {
					a.since = sent
				}
			case st == ServerOver && outcome == OutcomeSuccess && (validate == ValidateInit || validate == ValidateInconclusive):
				a.pendingValid++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		wuNames = wuNames[n:]
	}
	out := make(map[string]Place, len(accs))
	for name, a := range accs {
		switch {
		case a.inProgress > 0:
			out[name] = Place{State: PlaceInProgress, Since: a.since}
		case a.canonical != 0 || a.errMask != 0:
			// Decided: rboinc's assimilation is next, not BOINC.
		case a.unsent == 0 && (a.needValidate != 0 || a.pendingValid > 0):
			out[name] = Place{State: PlaceValidating}
		default:
			// Results unsent, none made yet, or all failed and the
			// transitioner's next ones to come.
			out[name] = Place{State: PlaceUnsent}
		}
	}
	return out, nil
}
