package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/workflow/wire"
)

// UploadMemory remembers, between runs of rboinc-submit, the upload
// collections that hold large inputs whose transfer was cut by a passing
// failure, so that the next run goes on from the byte the server holds
// instead of starting over. The server forgets collections a day old.
type UploadMemory struct {
	path    string
	entries map[string]rememberedUpload // server base URL + " " + MD5
}

type rememberedUpload struct {
	ID      string `json:"id"`
	DAVPath string `json:"dav_path"`
	Time    int64  `json:"time"`
}

// uploadMemoryAge is how long a remembered collection is tried again: less
// than the server keeps it.
const uploadMemoryAge = 20 * time.Hour

// DefaultUploadMemoryPath is rboinc/uploads in the user's cache directory
// ("" when there is none).
func DefaultUploadMemoryPath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rboinc", "uploads")
}

// OpenUploadMemory reads the memory at path; a missing or damaged file is
// an empty memory.
func OpenUploadMemory(path string) *UploadMemory {
	m := &UploadMemory{path: path, entries: map[string]rememberedUpload{}}
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &m.entries)
	}
	now := time.Now().Unix()
	for k, e := range m.entries {
		if now-e.Time > int64(uploadMemoryAge/time.Second) {
			delete(m.entries, k)
		}
	}
	return m
}

func (m *UploadMemory) lookup(base, sum string) (wire.UploadResponse, bool) {
	if m == nil {
		return wire.UploadResponse{}, false
	}
	e, ok := m.entries[base+" "+sum]
	return wire.UploadResponse{ID: e.ID, DAVPath: e.DAVPath}, ok
}

func (m *UploadMemory) remember(base string, up wire.UploadResponse, sums []string) {
	for _, s := range sums {
		m.entries[base+" "+s] = rememberedUpload{ID: up.ID, DAVPath: up.DAVPath, Time: time.Now().Unix()}
	}
}

func (m *UploadMemory) forget(base string, sums []string) {
	for _, s := range sums {
		delete(m.entries, base+" "+s)
	}
}

// Save writes the memory atomically (it is small).
func (m *UploadMemory) Save() error {
	if m == nil || m.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(m.entries)
	if err != nil {
		return err
	}
	return atomicfile.Write(m.path, b, 0o600)
}
