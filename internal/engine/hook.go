package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/spool"
)

// SpoolDirName is the hook spool's directory in the server root.
const SpoolDirName = spool.DirName

// Hook is what `rboinc-server process` does for one call: the front half
// every hook call shares (spool.Accept), then the hand-over. The call's
// record is the creator's, through the spool (advance.IntakeSpool). It
// returns an error only when BOINC should keep the outputs and call again
// later.
func Hook(ctx context.Context, root string, call boinc.HookCall, log *slog.Logger) error {
	if call.WUName == "" {
		log.Warn("hook called without a work-unit name; nothing to do", "wu_id", call.WUID, "error_mask", call.ErrorMask)
		return nil
	}
	root, err := spool.CheckRoot(root)
	if err != nil {
		return err
	}
	a, err := spool.Accept(root, call)
	if err != nil || a.Done {
		return err
	}
	return Handover(ctx, root, call, a.Entry, a.Alone, log)
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
