//go:build !unix

package boinc

import (
	"os"
	"syscall"
)

// Only the client programs are built for systems without Unix processes;
// the server, which runs create_work, is not. These keep the package
// building there.

func createWorkProcAttr() *syscall.SysProcAttr { return nil }

func killCreateWork(p *os.Process) error { return p.Kill() }
