package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/spool"
)

// SpoolDirName is the hook spool's directory in the server root.
const SpoolDirName = spool.DirName

// Hook is what `rboinc-server process` does for one call: spool it (see
// package spool), then hand it over. It returns an error only when BOINC
// should keep the outputs and call again later.
func Hook(ctx context.Context, root string, call boinc.HookCall, log *slog.Logger) error {
	if call.WUName == "" {
		log.Warn("hook called without a work-unit name; nothing to do", "wu_id", call.WUID, "error_mask", call.ErrorMask)
		return nil
	}
	root, err := CheckRoot(root)
	if err != nil {
		return err
	}
	alone := !spool.InStream(root)
	entry, err := spool.Write(root, call)
	if err != nil {
		return err
	}
	return Handover(ctx, root, call, entry, alone, log)
}

// CheckRoot makes root absolute and makes sure it is a server root, so that
// a hook pointed at a wrong directory fails (BOINC keeps the outputs)
// rather than spool where nothing reads.
func CheckRoot(root string) (string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, ConfigFile)); err != nil {
		return "", fmt.Errorf("%s is not an rboinc server root: %w", root, err)
	}
	return root, nil
}

// Handover is the rest of a hook call once its entry is spooled. When a
// creator holds the lock, a call in a stream returns at once and a lone
// call (alone) waits until its next step's work unit exists; when nobody
// holds it, this process takes it and does the creator's work itself.
func Handover(ctx context.Context, root string, call boinc.HookCall, entry string, alone bool, log *slog.Logger) error {
	defer spool.MarkCall(root)
	f, err := spool.Lock(root, false)
	if errors.Is(err, spool.ErrBusy) {
		if alone {
			spool.AskPass(root)
			waitCreated(ctx, root, entry, call, log)
		}
		return nil
	}
	if err != nil {
		return err
	}
	e, err := Open(ctx, root, log)
	if err != nil {
		f.Close()
		return err
	}
	defer e.Close()
	return e.createHolding(ctx, f)
}

// waitCreated waits, for a while, until the creator has taken entry in and
// the call's next step (if any) has its work unit. Giving up is harmless:
// the creator still does it.
func waitCreated(ctx context.Context, root, entry string, call boinc.HookCall, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tick := func() bool {
		select {
		case <-ctx.Done():
			log.Debug("the creator has not created the next step yet; returning", "wu", call.WUName)
			return false
		case <-time.After(2 * time.Millisecond):
			return true
		}
	}
	for spool.Exists(root, entry) {
		if !tick() {
			return
		}
	}
	e, err := Open(ctx, root, log)
	if err != nil {
		return
	}
	defer e.Close()
	c, s, err := e.db.StepByWU(ctx, call.WUName)
	if err != nil || s.Step+1 >= c.NSteps {
		return
	}
	for {
		n, err := e.db.StepOf(ctx, c, s.Step+1)
		if err != nil || n.State != pendingState || !tick() {
			return
		}
	}
}

// IntakeSpool records the spooled hook calls, oldest first, and removes each
// entry once recorded. It returns how many it took in; an error means the
// state database or the disk failed, and the entries left wait for the
// next pass.
func (e *Engine) IntakeSpool(ctx context.Context) (int, error) {
	names, err := spool.Entries(e.Root)
	if err != nil {
		return 0, err
	}
	n := 0
	var recorded []string
	for _, name := range names {
		if ctx.Err() != nil {
			return n, e.forgetRecorded(recorded, ctx.Err())
		}
		call, err := spool.Read(e.Root, name)
		if err != nil {
			// A torn or foreign entry will not improve; keep it aside for
			// the administrator rather than block every chain behind it.
			e.Log.Error("hook spool entry unreadable; set aside", "entry", name, "err", err)
			if err := spool.SetAside(e.Root, name); err != nil {
				return n, e.forgetRecorded(recorded, err)
			}
			continue
		}
		err = e.record(ctx, call, false)
		var up *unplacedError
		if errors.As(err, &up) {
			if err := spool.SetAsideUnplaced(e.Root, name, up.Error()); err != nil {
				return n, e.forgetRecorded(recorded, err)
			}
			if err := e.noteUnplaced(ctx, up, name); err != nil {
				return n, e.forgetRecorded(recorded, err)
			}
			continue
		}
		if err != nil {
			return n, e.forgetRecorded(recorded, err)
		}
		recorded = append(recorded, name)
		n++
	}
	return n, e.forgetRecorded(recorded, nil)
}

// forgetRecorded removes the spool entries whose calls are recorded, once
// the records are durable (one sync for all): an entry is the only copy
// of its call until then. A failure leaves them; recording is idempotent.
func (e *Engine) forgetRecorded(names []string, err error) error {
	if len(names) == 0 {
		return err
	}
	if serr := e.db.Sync(); serr != nil {
		return errors.Join(err, serr)
	}
	for _, name := range names {
		if rerr := spool.Remove(e.Root, name); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	return err
}

// spoolWaiting tells whether some hook call waits in the spool.
func (e *Engine) spoolWaiting() (bool, error) {
	names, err := spool.Entries(e.Root)
	return len(names) > 0, err
}
