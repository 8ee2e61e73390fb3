//go:build !linux

package mariadbtest

import (
	"os"
	"syscall"
)

// sysProcAttr returns nil outside Linux: there is no parent-death signal, so
// a server whose test binary was killed keeps running until it is killed by
// hand. The next run still starts: it has a fresh directory and a free port.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// serverRunning reports whether process pid is alive (outside Linux its
// command line is not checked).
func serverRunning(pid int, datadir string) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// killGroup kills p (outside Linux, not the programs it started).
func killGroup(p *os.Process) error { return p.Kill() }
