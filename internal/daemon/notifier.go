package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// NotifierLockName is the notifier's lock file in the server root: one
// process sends the notifications; another (a `serve` beside the notifier
// daemon) waits until it stops.
const NotifierLockName = "notifier.lock"

// Notifier sends the notifications of chain events, once it holds the
// notifier lock.
func Notifier(e *engine.Engine, poll time.Duration) Daemon {
	return Daemon{Name: "notifier", Run: func(ctx context.Context) error {
		unlock, err := waitLock(ctx, filepath.Join(e.Root, NotifierLockName), poll, e.Log, "another process sends the notifications; waiting until it stops")
		if err != nil || unlock == nil {
			return err
		}
		defer unlock()
		e.RunNotifier(ctx, poll)
		return nil
	}}
}

// NotifierPass is the notifier's one pass (--one_pass): it fans out the
// events that came and makes the deliveries that are due, until none
// waits; while another process sends the notifications it leaves them to
// it.
func NotifierPass(ctx context.Context, e *engine.Engine) error {
	path := filepath.Join(e.Root, NotifierLockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		e.Log.Info("another process sends the notifications; leaving them to it")
		return nil
	} else if err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	for {
		busy, err := e.NotifyPass(ctx)
		if err != nil || !busy {
			return err
		}
	}
}

// waitLock takes an flock on path, waiting (and saying so once) while
// another process holds it; a nil unlock with no error means ctx ended.
func waitLock(ctx context.Context, path string, poll time.Duration, log *slog.Logger, waiting string) (func(), error) {
	said := false
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", path, err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !said {
			log.Info(waiting, "lock", path)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(poll):
		}
	}
}
