package master

import (
	"context"
	"fmt"
	"time"
)

// Process waits up to timeout for events (0: only those already there),
// calls handler for each, in order, and acknowledges each whose handler
// returned nil: the next Process, also in a restarted master, starts
// after it. It returns how many events it handled. When handler fails,
// Process stops and returns its error; that event and those after it are
// delivered again by the next call. (DC_processMasterEvents)
func (m *Master) Process(ctx context.Context, timeout time.Duration, handler func(*Event) error) (int, error) {
	evs, err := m.pending(ctx, timeout)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.queue = nil
	m.mu.Unlock()
	n := 0
	for i, e := range evs {
		if err := ctx.Err(); err != nil {
			m.rewind()
			return n, err
		}
		if err := handler(e); err != nil {
			m.rewind()
			return n, fmt.Errorf("the handler of event %s: %w", e, err)
		}
		// Each acknowledgement is written at once (a crash of the master
		// delivers nothing handled twice); the last of the batch also
		// survives a crash of the machine.
		if err := m.ack(e, i == len(evs)-1); err != nil {
			m.rewind()
			return n, err
		}
		n++
	}
	if n > 0 {
		if err := m.dropServerCopies(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Wait returns the next event, waiting up to timeout for one; nil when
// none came. The event counts as handled only once it is acknowledged
// with Ack; until then a restarted master gets it again.
// (DC_waitMasterEvent)
func (m *Master) Wait(ctx context.Context, timeout time.Duration) (*Event, error) {
	evs, err := m.pending(ctx, timeout)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue = evs[1:]
	return evs[0], nil
}

// Ack acknowledges e and every event before it, durably.
func (m *Master) Ack(ctx context.Context, e *Event) error {
	if err := m.ack(e, true); err != nil {
		return err
	}
	return m.dropServerCopies(ctx)
}

// pending is the events fetched but not handed out, or else those the
// server has.
func (m *Master) pending(ctx context.Context, timeout time.Duration) ([]*Event, error) {
	m.mu.Lock()
	q := m.queue
	m.mu.Unlock()
	if len(q) > 0 {
		return q, nil
	}
	return m.fetch(ctx, timeout)
}

// rewind makes the events after the last acknowledged one come again.
func (m *Master) rewind() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue = nil
	m.next = m.st.LastID
}

// ack records e as handled in the state file, with the result files the
// server may now drop.
func (m *Master) ack(e *Event, durable bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.ID <= m.st.LastID {
		return nil
	}
	m.st.LastID = e.ID
	if e.Result != nil && len(e.Result.Files) > 0 {
		if m.st.Unacked == nil {
			m.st.Unacked = map[string][]string{}
		}
		for _, f := range e.Result.Files {
			m.st.Unacked[e.Tag] = append(m.st.Unacked[e.Tag], f.server)
		}
	}
	return m.save(durable)
}
