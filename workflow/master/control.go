package master

import (
	"context"
	"errors"
	"fmt"

	"github.com/rboinc/rboinc/workflow/wire"
)

func ref(wu *WU) (wire.ChainRef, error) {
	if wu == nil || wu.Name == "" || wu.Tag == "" {
		return wire.ChainRef{}, errors.New("a work unit needs its tag and name")
	}
	return wire.ChainRef{Group: wu.Tag, Name: wu.Name}, nil
}

// Suspend stops wu: no further step is made; a step running in BOINC
// finishes and its result arrives. (DC_suspendWU)
func (m *Master) Suspend(ctx context.Context, wu *WU) error {
	r, err := ref(wu)
	if err == nil {
		_, err = m.c.Stop(ctx, r)
	}
	return m.control(wu, "suspending", StateSuspended, err)
}

// Resume sets a suspended, failed or cancelled wu running again from its
// last finished step. (DC_resumeWU)
func (m *Master) Resume(ctx context.Context, wu *WU) error {
	r, err := ref(wu)
	if err == nil {
		_, err = m.c.Resume(ctx, r)
	}
	return m.control(wu, "resuming", StateRunning, err)
}

// Cancel stops wu and cancels its work in BOINC; the results of its
// finished steps stay. (DC_cancelWU)
func (m *Master) Cancel(ctx context.Context, wu *WU) error {
	r, err := ref(wu)
	if err == nil {
		_, err = m.c.Abort(ctx, r)
	}
	return m.control(wu, "cancelling", StateAborted, err)
}

func (m *Master) control(wu *WU, doing string, to State, err error) error {
	if err != nil {
		name := "?"
		if wu != nil {
			name = wu.Tag + "/" + wu.Name
		}
		return fmt.Errorf("%s work unit %s: %w", doing, name, err)
	}
	wu.State = to
	return nil
}

// Counts are the master's work units by state, of one of its tags ("" for
// all its tags). The user's other chains (other masters' tags, those of
// rboinc-submit or the GAHP) are not counted.
func (m *Master) Counts(ctx context.Context, tag string) (map[State]int, error) {
	tags := []string{tag}
	if tag == "" {
		tags = m.tags()
	}
	n := map[State]int{}
	for _, t := range tags {
		r, err := m.c.Status(ctx, t, "")
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("counting work units: %w", err)
		}
		for _, c := range r.Chains {
			n[stateOf(c.State)]++
		}
	}
	return n, nil
}

// Count is how many of the master's work units are in state s.
// (DC_getWUNumber)
func (m *Master) Count(ctx context.Context, s State) (int, error) {
	n, err := m.Counts(ctx, "")
	return n[s], err
}
