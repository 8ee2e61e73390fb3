package master

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// EventType says what an event reports.
type EventType int

const (
	// EventResult: a step finished; Event.Result holds its output files.
	EventResult EventType = iota + 1
	// EventFailure: the work unit failed for good; Event.Reason says why.
	EventFailure
	// EventState: any other change (Event.Kind says which); Event.State is
	// the work unit's state after it, when the change sets one.
	EventState
)

func (t EventType) String() string {
	switch t {
	case EventResult:
		return "result"
	case EventFailure:
		return "failure"
	case EventState:
		return "state"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// State is a work unit's state, as the DC-API's DC_WUState.
type State string

const (
	StateReady     State = "ready"     // made by NewWU, not submitted
	StateRunning   State = "running"   // submitted: queued or computing
	StateFinished  State = "finished"  // every step is done
	StateSuspended State = "suspended" // stopped by Suspend
	StateAborted   State = "aborted"   // failed, or cancelled by Cancel
	StateUnknown   State = "unknown"
)

// stateOf maps a chain state of the server to a work unit state.
func stateOf(chain string) State {
	switch chain {
	case wire.StateRunning, wire.StateQueued:
		return StateRunning
	case wire.StateDone:
		return StateFinished
	case wire.StateStopped:
		return StateSuspended
	case wire.StateFailed, wire.StateAborted:
		return StateAborted
	}
	return StateUnknown
}

// stateAfter is the state an event of the server's kind leaves a work
// unit in ("" when it does not set one).
func stateAfter(kind string) State {
	switch kind {
	case "step_created", "step_retried", "chain_resumed", "chain_extended":
		return StateRunning
	case "chain_done":
		return StateFinished
	case "chain_stopped":
		return StateSuspended
	case "chain_failed", "chain_aborted":
		return StateAborted
	}
	return ""
}

// Event is one thing that happened to one of the master's work units.
type Event struct {
	ID   int64 // the server's event id, increasing
	Type EventType
	// Kind is the server's name of the event: step_created, step_done,
	// step_retried, chain_done, chain_failed, chain_stopped,
	// chain_resumed, chain_extended, chain_aborted, group_done (Name
	// empty: no work unit of the tag runs any more).
	Kind   string
	Tag    string
	Name   string
	Step   int // the step it concerns, from 0; -1 when none
	Time   time.Time
	State  State
	Reason string  // why (failures, retries), in the server's words
	Result *Result // for EventResult
}

// WU is the event's work unit, for Suspend, Resume and Cancel.
func (e *Event) WU() *WU { return &WU{Tag: e.Tag, Name: e.Name, State: e.State} }

func (e *Event) String() string {
	s := fmt.Sprintf("#%d %s %s/%s step %d", e.ID, e.Kind, e.Tag, e.Name, e.Step)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Result is one finished step's outputs, on the master's disk. Files is
// empty when the server no longer had them (the chain was purged, or
// another master with the same tag took them first).
type Result struct {
	Step  int
	Files []File
}

// File is one output file of a step, downloaded and verified.
type File struct {
	Index int    // k of the result template's <OUTFILE_k/>
	Name  string // its name on disk (the server's name and first alias)
	Path  string // where it is
	MD5   string
	Size  int64

	server string // its name on the server, to acknowledge
}

// Output is the path of output k, or "" when the step has none (or r is
// nil: the event is no result).
func (r *Result) Output(k int) string {
	if r == nil {
		return ""
	}
	for _, f := range r.Files {
		if f.Index == k {
			return f.Path
		}
	}
	return ""
}

// Alias is the path of the output whose name ends in suffix (an alias
// of the result template, such as ".coor"), or "".
func (r *Result) Alias(suffix string) string {
	if r == nil {
		return ""
	}
	for _, f := range r.Files {
		if strings.HasSuffix(f.Name, suffix) {
			return f.Path
		}
	}
	return ""
}

// isNotFound: the server knows no such group or chain (purged, say).
func isNotFound(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == 404
}

// toEvent converts a server event (without its result files).
func toEvent(w wire.Event) *Event {
	e := &Event{ID: w.ID, Kind: w.Type, Tag: w.Group, Name: w.Name, Step: w.Step, Time: time.Unix(w.Time, 0),
		Reason: w.Reason, State: stateAfter(w.Type), Type: EventState}
	switch w.Type {
	case "step_done":
		e.Type = EventResult
		e.Result = &Result{Step: w.Step}
	case "chain_failed":
		e.Type = EventFailure
	}
	return e
}

// resultFile is a listed file as a File in dir (the tag's directory).
func resultFile(dir string, rf wire.ResultFile) File {
	name := client.LocalName(rf)
	return File{Index: rf.Index, Name: name, Path: filepath.Join(dir, rf.Chain, name), MD5: rf.MD5, Size: rf.Size, server: rf.Name}
}
