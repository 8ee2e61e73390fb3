package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Process waits up to timeout for events (0: only those already there),
// calls handler for each, in order, and acknowledges each whose handler
// returned nil: the next Process, also in a restarted master, starts
// after it (see the package documentation for when the acknowledgements
// are written). It returns how many events it handled. When handler fails,
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
	lastSave := time.Now()
	for i, e := range evs {
		if err := ctx.Err(); err != nil {
			m.rewind()
			return n, m.flush(err)
		}
		if err := handler(e); err != nil {
			m.rewind()
			return n, m.flush(fmt.Errorf("the handler of event %s: %w", e, err))
		}
		// Acknowledgements are written every saveEvery events or
		// saveAfter, and at the end of the batch durably: a crash of the
		// master delivers again at most the events since the last write,
		// and what SetData keeps is always that of the id written.
		final := i == len(evs)-1
		write := final || (i+1)%saveEvery == 0 || time.Since(lastSave) > saveAfter
		if err := m.ack(e, write, final); err != nil {
			m.rewind()
			return n, err
		}
		if write {
			lastSave = time.Now()
		}
		n++
	}
	if n > 0 {
		t0 := time.Now()
		if err := m.dropServerCopies(ctx); err != nil {
			return n, err
		}
		slog.Debug("master: server copies dropped", "took", time.Since(t0))
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
	if err := m.ack(e, true, true); err != nil {
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

// How often Process writes its acknowledgements within a batch.
const (
	saveEvery = 100
	saveAfter = 100 * time.Millisecond
)

// flush writes the acknowledgements made so far (after a handler failed
// or the context ended), returning err.
func (m *Master) flush(err error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirty {
		if serr := m.save(true); serr != nil {
			return errors.Join(err, serr)
		}
		m.dirty = false
	}
	return err
}

// ack records e as handled, with the result files the server may now
// drop; with write, it writes the state file (durable: to stable storage).
func (m *Master) ack(e *Event, write, durable bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.ID <= m.st.LastID {
		if write && m.dirty {
			m.dirty = false
			return m.save(durable)
		}
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
	if !write {
		m.dirty = true
		return nil
	}
	m.dirty = false
	return m.save(durable)
}
