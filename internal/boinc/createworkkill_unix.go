//go:build unix

package boinc

import (
	"os"
	"syscall"
)

// killCreateWork kills create_work's process group: create_work and
// whatever a project's wrapper started.
func killCreateWork(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
