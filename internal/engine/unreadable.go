package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/spool"
)

// KeepUnreadable answers a hook call whose arguments rboinc cannot read
// (a result naming BOINC has not used before, outputs of two work units in
// one call) but whose output files, or a token, name one of rboinc's work
// units. Acknowledging it would let BOINC's file deleter remove the only
// copy of those outputs, so the call and its outputs are kept aside in the
// spool (spool.UnplacedPrefix, with the reason), and the chain named is
// marked as needing attention. kept is false when the call does not look
// like rboinc's (nothing done); an error means BOINC should call again.
func KeepUnreadable(ctx context.Context, root string, args []string, perr error, log *slog.Logger) (kept bool, err error) {
	call, w, ok := unreadableCall(args)
	if !ok {
		return false, nil
	}
	if root, err = spool.CheckRoot(root); err != nil {
		return true, err
	}
	up := &advance.Unplaced{WU: w, Why: "but rboinc cannot read the hook's call (" + perr.Error() + ")"}
	entry, err := spool.WriteUnplaced(root, call, up.Error()+"\nhook arguments: "+strings.Join(args, " "))
	if err != nil {
		return true, err
	}
	e, err := Open(ctx, root, log)
	if err != nil {
		return true, err
	}
	defer e.Close()
	return true, e.noteUnplaced(ctx, up, entry)
}

// unreadableCall takes what can be had from a call's arguments: the paths
// (they contain a '/'), the work-unit id of the `WU_ID PATH...` form, and
// the rboinc work unit the first output file's name, or a token, names.
func unreadableCall(args []string) (boinc.HookCall, naming.WU, bool) {
	var call boinc.HookCall
	var fromFile, fromToken string
	if len(args) == 0 || args[0] == "--error" || args[0] == "-error" {
		return call, naming.WU{}, false // no outputs to keep
	}
	for i, a := range args {
		switch {
		case strings.Contains(a, "/"):
			call.Files = append(call.Files, a)
			if fromFile == "" {
				fromFile, _ = naming.FindWU(filepath.Base(a))
			}
		case i == 0:
			call.WUID, _ = strconv.ParseInt(a, 10, 64)
		}
		if _, err := naming.ParseWU(a); err == nil && fromToken == "" {
			fromToken = a
		}
	}
	name := fromFile
	if name == "" {
		name = fromToken
	}
	w, err := naming.ParseWU(name)
	if err != nil || len(call.Files) == 0 {
		return call, naming.WU{}, false
	}
	call.WUName = name
	return call, w, true
}

// foreignOutputs refuses a call for one of rboinc's work units whose
// outputs are not named as that work unit's (a call kept by
// KeepUnreadable and handed back by the administrator, the cause not
// fixed): taking them in would be wrong, dropping them would lose them.
func foreignOutputs(call boinc.HookCall) *advance.Unplaced {
	w, err := naming.ParseWU(call.WUName)
	if err != nil {
		return nil
	}
	for _, p := range call.Files {
		if o, err := naming.ParseOutput(filepath.Base(p)); err != nil || o.WU != call.WUName {
			return &advance.Unplaced{WU: w, Why: "but its output " + filepath.Base(p) + " is not named as that work unit's outputs are"}
		}
	}
	return nil
}
