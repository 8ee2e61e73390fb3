package engine

import (
	"log/slog"
	"time"
)

// failStreak follows a daemon loop's consecutive failures: the wait before
// the next try grows, and the log gets the first failure, a changed one,
// a reminder a minute, and the recovery, not a line each try (a full disk
// made 572 lines a minute).
type failStreak struct {
	count    int
	last     string
	lastLog  time.Time
	since    time.Time
	maxDelay time.Duration
}

// fail notes a failure and returns how long to wait before trying again.
func (f *failStreak) fail(log *slog.Logger, msg string, err error, base time.Duration) time.Duration {
	now := time.Now()
	if f.count == 0 {
		f.since = now
	}
	f.count++
	if text := err.Error(); text != f.last || now.Sub(f.lastLog) >= time.Minute {
		attrs := []any{"err", err}
		if f.count > 1 {
			attrs = append(attrs, "failures", f.count, "since", f.since.Format(time.RFC3339))
		}
		if IsNoSpace(err) {
			attrs = append(attrs, "cause", "the server's disk is full: free space; work resumes by itself")
		}
		log.Error(msg, attrs...)
		f.last, f.lastLog = text, now
	}
	d := base
	for i := 1; i < f.count && d < f.max(); i++ {
		d *= 2
	}
	return min(d, f.max())
}

// ok ends a streak, saying so when there was one.
func (f *failStreak) ok(log *slog.Logger, what string) {
	if f.count > 0 {
		log.Info(what+" works again", "failures", f.count, "since", f.since.Format(time.RFC3339))
	}
	f.count, f.last = 0, ""
}

func (f *failStreak) max() time.Duration {
	if f.maxDelay > 0 {
		return f.maxDelay
	}
	return 30 * time.Second
}
