package master

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/rboinc/rboinc/workflow/client"
)

// Options are what a master sets besides its server and token.
type Options struct {
	// CAFile, when set, is a PEM file of certificates to trust besides the
	// system's (a self-signed server, a private CA), as the clients'
	// -cacert (RBOINC_CA_FILE).
	CAFile string
	// Dir receives the result files, <Dir>/<tag>/<name>/<file> (default
	// "results" in the working directory).
	Dir string
	// StateFile keeps the last acknowledged event id (and SetData's data)
	// across restarts. Without it a master starts from the server's newest
	// event each time it connects.
	StateFile string
	// Tag is the tag of work units made by NewWU (default "master").
	Tag string
}

// Master is one master program's connection to an rboinc server.
type Master struct {
	c    *client.Client
	dir  string
	tag  string
	path string // state file, "" for none

	mu    sync.Mutex
	st    state
	queue []*Event // fetched, not yet handed out by Wait
	next  int64    // the events after this id are to be fetched
	dirty bool     // acknowledgements not written yet
}

// Connect opens a master on the server at url (e.g.
// http://host:8080/rboinc_cgi) with the user's token, and reads the state
// file if there is one.
func Connect(ctx context.Context, url, token string, o Options) (*Master, error) {
	c, err := client.New(url, token)
	if err != nil {
		return nil, err
	}
	if o.CAFile != "" {
		if err := c.TrustCAFile(o.CAFile); err != nil {
			return nil, err
		}
	}
	m := &Master{c: c, dir: o.Dir, tag: o.Tag, path: o.StateFile}
	if m.dir == "" {
		m.dir = "results"
	}
	if m.tag == "" {
		m.tag = "master"
	}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the result directory: %w", err)
	}
	found, err := m.load()
	if err != nil {
		return nil, err
	}
	if !found {
		// A new master: its events are those after now.
		r, err := c.Events(ctx, -1, 0)
		if err != nil {
			return nil, fmt.Errorf("asking the server where its events stand: %w", err)
		}
		m.st.LastID = r.LastID
		if err := m.save(true); err != nil {
			return nil, err
		}
	}
	m.next = m.st.LastID
	// Result files of events acknowledged just before a crash.
	if err := m.dropServerCopies(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Client is the underlying client, for what this package does not cover
// (Queues, Status, Extend...).
func (m *Master) Client() *client.Client { return m.c }

// Dir is the directory the result files go to.
func (m *Master) Dir() string { return m.dir }

// LastAcked is the id of the last acknowledged event.
func (m *Master) LastAcked() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.LastID
}

// SetData keeps v (as JSON) in the state file with the next
// acknowledgement, or now with Save: what the master has decided, kept
// in the same atomic write as the event id it decided on.
func (m *Master) SetData(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the master's data: %w", err)
	}
	m.mu.Lock()
	m.st.Data = b
	m.mu.Unlock()
	return nil
}

// Data decodes the data last given to SetData (kept in the state file)
// into v; it reports false when there is none.
func (m *Master) Data(v any) (bool, error) {
	m.mu.Lock()
	b := m.st.Data
	m.mu.Unlock()
	if len(b) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("the data in the state file %s is not what the master expects: %w", m.path, err)
	}
	return true, nil
}

// Save writes the state file now, durably (the data of SetData with it).
func (m *Master) Save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.save(true)
}

// resultDir is where the files of a tag's work unit go.
func (m *Master) resultDir(tag string) string { return filepath.Join(m.dir, tag) }
