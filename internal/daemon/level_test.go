package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// BOINC's levels (sched_msgs.h): 1 critical, 2 warning, 3 normal, 4 debug;
// a message shows when its kind is at most -d.
func TestLevelIsBOINCs(t *testing.T) {
	for d, want := range map[int]slog.Level{0: slog.LevelError, 1: slog.LevelError, 2: slog.LevelWarn, 3: slog.LevelInfo, 4: slog.LevelDebug, 5: slog.LevelDebug} {
		if got := Level(d); got != want {
			t.Errorf("-d %d: %v, want %v", d, got, want)
		}
	}
	var b bytes.Buffer
	log := Logger(&b, 2)
	log.Info("normal")
	log.Warn("warning")
	if s := b.String(); strings.Contains(s, "normal") || !strings.Contains(s, "warning") {
		t.Fatalf("-d 2 wrote:\n%s", s)
	}
}
