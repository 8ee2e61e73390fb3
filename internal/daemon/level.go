package daemon

import (
	"io"
	"log/slog"
)

// DefaultLevel is BOINC's daemons' debug level when -d is not given.
const DefaultLevel = 3

// Level is the log level of BOINC's debug level d (-d, --debug_level):
// 1 critical messages only, 2 warnings too, 3 normal messages, 4 debug
// (sched_msgs.h: MSG_CRITICAL=1 ... MSG_DEBUG=4; a message is written
// when its kind is at most d).
func Level(d int) slog.Level {
	switch {
	case d <= 1:
		return slog.LevelError
	case d == 2:
		return slog.LevelWarn
	case d == 3:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// Logger writes to w at BOINC's debug level d.
func Logger(w io.Writer, d int) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: Level(d)}))
}
