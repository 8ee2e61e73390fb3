package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
)

func TestLoadConfigLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) { os.WriteFile(filepath.Join(dir, engine.ConfigFile), []byte(s), 0o644) }
	write(`{"boinc_project":"/p"}`)
	c, err := engine.LoadConfig(dir)
	if err != nil || c.Limits != engine.DefaultLimits() || c.MaxUploadBytes != 4<<30 {
		t.Fatalf("absent limits take the defaults: %+v %v", c.Limits, err)
	}
	write(`{"boinc_project":"/p","max_upload_bytes":0,"max_running_chains":5}`)
	if c, _ := engine.LoadConfig(dir); c.MaxUploadBytes != 0 || c.MaxRunningChains != 5 {
		t.Fatalf("given limits: %+v", c.Limits)
	}
	if c.MaxJSONInFlight != 64<<20 {
		t.Fatalf("max_json_bytes_in_flight absent: %d, want the default 64 MiB", c.MaxJSONInFlight)
	}
	write(`{"boinc_project":"/p","max_json_bytes_in_flight":1048576}`)
	if c, _ := engine.LoadConfig(dir); c.MaxJSONInFlight != 1<<20 {
		t.Fatalf("max_json_bytes_in_flight given: %d", c.MaxJSONInFlight)
	}
	for name, s := range map[string]string{
		"negative":        `{"max_upload_bytes":-1}`,
		"negative budget": `{"max_json_bytes_in_flight":-1}`,
		"malformed":       `{"max_upload_bytes":`,
		"wrong type":      `{"max_running_chains":"10; rm -rf /"}`,
		"deep":            strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000),
		"overflow":        `{"max_pool_bytes":1e99}`,
	} {
		write(s)
		if _, err := engine.LoadConfig(dir); err == nil || !strings.Contains(err.Error(), engine.ConfigFile) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
