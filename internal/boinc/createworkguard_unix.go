//go:build unix

package boinc

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// guardExecutable is this program, the guard's program. On Linux it is the
// running binary itself, even when an upgrade replaced its file.
func guardExecutable() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this program to run create_work's guard: %w", err)
	}
	return exe, nil
}

// guardProcAttr puts the guard into create_work's process group, so that
// killing the group kills it too and its own kill reaches create_work. It
// is not killed with its parent: it must outlive a dead feeder.
func guardProcAttr(pgid int) (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}, nil
}
