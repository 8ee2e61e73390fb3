package boincdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// resultState words a result's server_state and outcome.
func resultState(serverState, outcome int) string {
	switch serverState {
	case ServerUnsent, ServerInactive:
		return "unsent"
	case ServerInProgress:
		return "in progress"
	}
	switch outcome {
	case OutcomeSuccess:
		return "success"
	case OutcomeClientError, OutcomeNoReply, OutcomeValidateError, OutcomeClientDetached:
		return "error"
	case OutcomeDidntNeed:
		return "not needed"
	case OutcomeCouldntSend:
		return "couldn't send"
	}
	return "over"
}

// Counts is what BOINC did with a set of work units: their results by
// state, and how long the decided ones took (the engine hands it on as
// wire.BoincCounts).
type Counts struct {
	WorkUnits  int // of the set, those BOINC holds
	Unsent     int
	InProgress int
	Success    int // results over with outcome success
	Error      int // results over with a client error, no reply or a validate error
	Decided    int // work units with a canonical result or an error mask
	// Turnaround of the work units with a canonical result: from the work
	// unit's creation to the canonical result's arrival, in seconds.
	TurnaroundAvg float64
	TurnaroundMax int64
	// Priority range of the work units not assimilated yet.
	PriorityMin *int
	PriorityMax *int
}

// ResultStatus is how one result of a work unit stands (the engine hands
// it on as wire.BoincResult).
type ResultStatus struct {
	Name         string
	State        string // unsent, in progress, success, error, not needed, couldn't send, over
	HostID       int64
	ExitStatus   int // the host's error code
	SentTime     int64
	ReceivedTime int64
	ElapsedTime  float64
}

// Report reads, in batches, what BOINC did with the work units of these
// names.
func (d *DB) Report(ctx context.Context, names []string) (Counts, error) {
	var r Counts
	var turnSum float64
	var turnN int
	for len(names) > 0 {
		n := min(len(names), 500)
		batch := names[:n]
		names = names[n:]
		rows, err := d.QueryContext(ctx, `SELECT w.id, w.create_time, w.canonical_resultid, w.error_mask, w.assimilate_state,
			w.priority, coalesce(c.received_time, 0)
			FROM workunit w LEFT JOIN result c ON c.id = w.canonical_resultid WHERE w.name IN `+inList(n), anys(batch)...)
		if err != nil {
			return r, fmt.Errorf("reading work units: %w", err)
		}
		var ids []int64
		for rows.Next() {
			var id, created, canon, received int64
			var mask, assim, prio int
			if err := rows.Scan(&id, &created, &canon, &mask, &assim, &prio, &received); err != nil {
				rows.Close()
				return r, err
			}
			ids = append(ids, id)
			r.WorkUnits++
			if canon != 0 || mask != 0 {
				r.Decided++
			}
			if canon != 0 && received >= created {
				t := received - created
				turnSum += float64(t)
				turnN++
				r.TurnaroundMax = max(r.TurnaroundMax, t)
			}
			if assim != AssimilateDone {
				if r.PriorityMin == nil || prio < *r.PriorityMin {
					r.PriorityMin = &prio
				}
				if r.PriorityMax == nil || prio > *r.PriorityMax {
					r.PriorityMax = &prio
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return r, err
		}
		if len(ids) == 0 {
			continue
		}
		rows, err = d.QueryContext(ctx, `SELECT server_state, outcome, count(*) FROM result WHERE workunitid IN `+inList(len(ids))+
			` GROUP BY server_state, outcome`, anys(ids)...)
		if err != nil {
			return r, fmt.Errorf("reading results: %w", err)
		}
		for rows.Next() {
			var st, out, k int
			if err := rows.Scan(&st, &out, &k); err != nil {
				rows.Close()
				return r, err
			}
			switch resultState(st, out) {
			case "unsent":
				r.Unsent += k
			case "in progress":
				r.InProgress += k
			case "success":
				r.Success += k
			case "error":
				r.Error += k
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return r, err
		}
	}
	if turnN > 0 {
		r.TurnaroundAvg = turnSum / float64(turnN)
	}
	return r, nil
}

// Results lists the results of work units by name, in id order.
func (d *DB) Results(ctx context.Context, wuNames []string) (map[string][]ResultStatus, error) {
	out := map[string][]ResultStatus{}
	for len(wuNames) > 0 {
		n := min(len(wuNames), 500)
		rows, err := d.QueryContext(ctx, `SELECT w.name, r.name, r.server_state, r.outcome, r.hostid, r.exit_status, r.sent_time,
			r.received_time, r.elapsed_time FROM result r JOIN workunit w ON w.id = r.workunitid
			WHERE w.name IN `+inList(n)+` ORDER BY r.id`, anys(wuNames[:n])...)
		if err != nil {
			return nil, fmt.Errorf("reading results: %w", err)
		}
		for rows.Next() {
			var wu string
			var ri ResultStatus
			var st, outcome int
			if err := rows.Scan(&wu, &ri.Name, &st, &outcome, &ri.HostID, &ri.ExitStatus, &ri.SentTime, &ri.ReceivedTime, &ri.ElapsedTime); err != nil {
				rows.Close()
				return nil, err
			}
			ri.State = resultState(st, outcome)
			out[wu] = append(out[wu], ri)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		wuNames = wuNames[n:]
	}
	return out, nil
}

// Failure is what a work unit's last error result reported.
type Failure struct {
	ExitStatus int
	StderrTail string // the last lines of the application's stderr
	// Outputs are the outputs the client found absent or too big: the
	// result failed though the application may have exited with 0.
	Outputs []OutputFailure
}

// FailureDetail says what the failing results of a work unit reported:
// the last error result's exit status, the last lines of its stderr
// (BOINC's stderr_out) and the outputs its client found wrong. found is
// false when there is no error result.
func (d *DB) FailureDetail(ctx context.Context, wu string) (f Failure, found bool, err error) {
	var out, docIn []byte
	err = d.QueryRowContext(ctx, `SELECT r.exit_status, r.stderr_out, r.xml_doc_in FROM result r JOIN workunit w ON w.id = r.workunitid
		WHERE w.name = ? AND r.server_state = ? AND r.outcome IN (?, ?, ?) ORDER BY r.id DESC LIMIT 1`,
		wu, ServerOver, OutcomeClientError, OutcomeNoReply, OutcomeValidateError).Scan(&f.ExitStatus, &out, &docIn)
	if errors.Is(err, sql.ErrNoRows) {
		return f, false, nil
	}
	if err != nil {
		return f, false, err
	}
	f.StderrTail = lastLines(appStderr(string(out)), 3, 300)
	f.Outputs = outputFailures(string(out), string(docIn))
	return f, true, nil
}

// appStderr is what the application wrote to stderr, from a result's
// stderr_out: BOINC's client wraps it in <stderr_txt> (inside CDATA, after a
// <message>, or before one that reports failed outputs), and adds its own
// "called boinc_finish" line.
func appStderr(s string) string {
	if i := strings.Index(s, "<stderr_txt>"); i >= 0 {
		s = s[i+len("<stderr_txt>"):]
		if j := strings.Index(s, "</stderr_txt>"); j >= 0 {
			s = s[:j]
		}
		// The client puts a newline either side of what it read.
		s = strings.TrimPrefix(s, "\n")
		s = strings.TrimSuffix(s, "\n")
	} else {
		s = clientMessages(s)
	}
	s = unescapeNonASCII(s)
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, "called boinc_finish") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// lastLines is the end of a text: its last n non-empty lines, at most max
// bytes, on one line.
func lastLines(s string, n, max int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	out := strings.Join(keep, " | ")
	if len(out) > max {
		out = "..." + out[len(out)-max:]
	}
	return out
}

// Outcome is what a work unit's deciding result reported.
type Outcome struct {
	ExitStatus   int
	Elapsed, CPU float64
	Stderr       string // what the application wrote to stderr
}

// Outcome reads a work unit's canonical result or, without one, its last
// error result; found is false when it has neither.
func (d *DB) Outcome(ctx context.Context, wu string) (o Outcome, found bool, err error) {
	var out []byte
	err = d.QueryRowContext(ctx, `SELECT r.exit_status, r.elapsed_time, r.cpu_time, r.stderr_out FROM workunit w JOIN result r ON r.id = w.canonical_resultid
		WHERE w.name = ?`, wu).Scan(&o.ExitStatus, &o.Elapsed, &o.CPU, &out)
	if errors.Is(err, sql.ErrNoRows) {
		err = d.QueryRowContext(ctx, `SELECT r.exit_status, r.elapsed_time, r.cpu_time, r.stderr_out FROM result r JOIN workunit w ON w.id = r.workunitid
			WHERE w.name = ? AND r.server_state = ? AND r.outcome IN (?, ?, ?) ORDER BY r.id DESC LIMIT 1`,
			wu, ServerOver, OutcomeClientError, OutcomeNoReply, OutcomeValidateError).Scan(&o.ExitStatus, &o.Elapsed, &o.CPU, &out)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return o, false, nil
	}
	if err != nil {
		return o, false, err
	}
	o.Stderr = appStderr(string(out))
	return o, true, nil
}

// unescapeNonASCII undoes the client's non_ascii_escape, which writes each
// byte over 127 of the app's stderr as &#N; (an app's UTF-8 message would
// otherwise reach the scientist as entities).
func unescapeNonASCII(s string) string {
	if !strings.Contains(s, "&#") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "&#")
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexByte(s, ';')
		if n, err := strconv.Atoi(s[2:max(j, 2)]); j > 2 && j <= 5 && err == nil && n > 127 && n < 256 {
			b.WriteByte(byte(n))
			s = s[j+1:]
			continue
		}
		b.WriteString("&#")
		s = s[2:]
	}
	b.WriteString(s)
	return b.String()
}
