package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rboinc/rboinc/internal/fsync"
	"github.com/rboinc/rboinc/workflow/wire"
)

// state is the state file's content.
type state struct {
	LastID int64 `json:"last_event_id"`
	// Unacked are result files (by group) of acknowledged events that the
	// server may still hold: it is told to drop them after the write that
	// acknowledged their events, and again after a restart.
	Unacked map[string][]string `json:"unacknowledged_files,omitempty"`
	// Tags are the tags besides Options.Tag the master has submitted
	// work units of: their events and results are its own too.
	Tags []string        `json:"tags,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

// parseState reads a state file's bytes.
func parseState(b []byte) (state, error) {
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return state{}, err
	}
	if st.LastID < 0 {
		return state{}, errors.New("negative event id")
	}
	return st, nil
}

// load reads the state file; false when there is none yet.
func (m *Master) load() (bool, error) {
	if m.path == "" {
		return false, nil
	}
	b, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the master's state file: %w", err)
	}
	st, err := parseState(b)
	if err != nil {
		return false, fmt.Errorf("the master's state file %s is damaged (%v); move it away to start afresh from the server's newest event", m.path, err)
	}
	m.st = st
	return true, nil
}

// save writes the state file atomically (a temporary file renamed into
// place), so a crash leaves the old state or the new one. With durable it
// also survives a crash of the machine. The caller holds m.mu.
func (m *Master) save(durable bool) error {
	if m.path == "" {
		return nil
	}
	b, err := json.Marshal(m.st)
	if err != nil {
		return fmt.Errorf("encoding the master's state: %w", err)
	}
	dir := filepath.Dir(m.path)
	tmp := filepath.Join(dir, "."+filepath.Base(m.path)+".tmp"+strconv.Itoa(os.Getpid()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing the master's state file: %w", err)
	}
	_, werr := f.Write(b)
	if werr == nil && durable {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, m.path)
	}
	if werr == nil && durable {
		werr = fsync.Dir(dir)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the master's state file %s: %w", m.path, werr)
	}
	m.dirty = false
	return nil
}

// dropServerCopies tells the server to drop the result files of
// acknowledged events, and forgets them once it has.
func (m *Master) dropServerCopies(ctx context.Context) error {
	m.mu.Lock()
	pending := make(map[string][]string, len(m.st.Unacked))
	for g, files := range m.st.Unacked {
		pending[g] = files
	}
	m.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	for group, files := range pending {
		if _, err := m.c.Ack(ctx, wire.AckRequest{Group: group, Files: files, Consumer: wire.ConsumerMaster}); err != nil {
			return fmt.Errorf("telling the server to drop the result files it delivered: %w", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for group, files := range pending {
		// Only what was sent: more may have been added meanwhile.
		if len(m.st.Unacked[group]) == len(files) {
			delete(m.st.Unacked, group)
		} else {
			m.st.Unacked[group] = m.st.Unacked[group][len(files):]
		}
	}
	return m.save(false)
}
