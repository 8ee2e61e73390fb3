//go:build unix && !linux

package boinc

import "syscall"

// createWorkProcAttr: create_work in a process group of its own, killed
// whole. (Only Linux kills it with the process that feeds it.)
func createWorkProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
