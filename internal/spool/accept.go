package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/hookargs"
)

// serverConfig is the server's configuration file (engine.ConfigFile),
// whose presence marks a server root.
const serverConfig = "rboinc.json"

// CheckRoot makes root absolute and makes sure it is a server root, so that
// a hook pointed at a wrong directory fails (BOINC keeps the outputs)
// rather than spool where nothing reads.
func CheckRoot(root string) (string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, serverConfig)); err != nil {
		return "", fmt.Errorf("%s is not an rboinc server root: %w", root, err)
	}
	return root, nil
}

// Accepted is a hook call Accept has spooled.
type Accepted struct {
	Entry string // the spool entry that holds the call
	// Alone: no hook call returned within StreamGap, so this one waits
	// for its next step's work unit, as after a synchronous hook.
	Alone bool
	// Done: a creator holds the lock and the call comes in a stream; the
	// creator takes it in and the hook returns now.
	Done bool
}

// Accept is the front half of every hook call, the same in rboinc-hook
// and in rboinc-server process: it spools the call into the server root
// root (checked with CheckRoot) and tells what is left. Unless Done, the
// caller hands the entry over to rboinc-server (engine.Handover), which
// waits for a lone call's next step or does the creator's work itself. An
// error means BOINC must keep the outputs and call again; it is recorded
// (RecordFailure) for the administrator.
func Accept(root string, call hookargs.HookCall) (Accepted, error) {
	a := Accepted{Alone: !InStream(root)}
	var err error
	if a.Entry, err = Write(root, call); err != nil {
		RecordFailure(root, call.WUName, err.Error())
		return a, err
	}
	f, err := Lock(root, false)
	if errors.Is(err, ErrBusy) && !a.Alone {
		MarkCall(root)
		a.Done = true
		return a, nil
	}
	if err == nil {
		f.Close() // the hand-over takes it again, or finds it taken
	}
	return a, nil
}
