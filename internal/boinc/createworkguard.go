package boinc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/rboinc/rboinc/internal/boinc/inputguard"
)

// create_work --stdin takes the end of its input for the end of the jobs:
// it then inserts every job it read. Its input is a pipe, and the kernel
// closes a dead process's end of a pipe before anything tells its children
// that it died (Linux's parent-death signal comes after), so a server
// killed while it feeds create_work would hand it an end it never meant:
// work units of chains it never recorded.
//
// The guard closes that gap. It is a small process (this program again,
// package inputguard) in create_work's process group that holds a second
// copy of the write end of create_work's input, so that the feeder's death
// alone does not end that input, and reads a control pipe from the feeder.
// The feeder writes inputguard.Release on it when it means to finish; the
// guard then drops its copy and exits. If the control pipe ends without
// that byte (the feeder died), the guard kills its whole process group,
// create_work, whatever a wrapper started and itself, with one kill:
// SIGKILL is then pending in every one of them before the guard's copy
// closes, so no create_work runs another instruction after its input ends.

// createWorkGuard is the feeder's side of a guard.
type createWorkGuard struct {
	cmd *exec.Cmd
	ctl *os.File // write end of the control pipe
	out lockedBuffer
}

// startCreateWorkGuard starts the guard of the create_work whose process
// group is pgid and whose input's write end is in.
func startCreateWorkGuard(in *os.File, pgid int) (*createWorkGuard, error) {
	exe, err := guardExecutable()
	if err != nil {
		return nil, err
	}
	attr, err := guardProcAttr(pgid)
	if err != nil {
		return nil, err
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer ctlR.Close()
	g := &createWorkGuard{ctl: ctlW}
	g.cmd = exec.Command(exe)
	g.cmd.Args[0] = "rboinc-create-work-guard" // as ps shows it
	g.cmd.Env = []string{inputguard.Env + "=" + strconv.Itoa(pgid)}
	g.cmd.Dir = "/"
	g.cmd.ExtraFiles = []*os.File{in, ctlR} // inputguard.InputFD and ControlFD
	g.cmd.SysProcAttr = attr
	g.cmd.Stderr = &g.out
	if err := g.cmd.Start(); err != nil {
		ctlW.Close()
		return nil, err
	}
	return g, nil
}

// release tells the guard that the feeder finishes: it drops its copy of
// create_work's input and exits. An error means the guard is gone, and
// create_work must then be killed, not finished.
func (g *createWorkGuard) release() error {
	_, err := g.ctl.Write([]byte{inputguard.Release})
	if cerr := g.ctl.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create_work's guard process is gone: %w", err)
	}
	return nil
}

// stop ends the control pipe without releasing the guard: it kills its
// process group (create_work's) and itself. Used once create_work is dead
// or killed.
func (g *createWorkGuard) stop() { g.ctl.Close() }

// wait waits for the guard to exit, after release or stop.
func (g *createWorkGuard) wait() error {
	err := g.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("create_work's guard: %w: %s", err, g.out.excerpt())
	}
	return err
}
